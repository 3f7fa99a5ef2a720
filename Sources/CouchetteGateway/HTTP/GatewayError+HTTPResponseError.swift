import Hummingbird

// MARK: - HTTPResponseError

extension GatewayError: HTTPResponseError {
    /// The HTTP status of ``statusCode``.
    public var status: HTTPResponse.Status {
        HTTPResponse.Status(code: statusCode, reasonPhrase: Self.reasonPhrase(forStatus: statusCode))
    }

    /// Renders `{"error": NAME, "reason": REASON}` with the error's status (spec: gateway-rest-api.md §1.4).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONRenderer().response(for: self, method: request.method)
    }
}
