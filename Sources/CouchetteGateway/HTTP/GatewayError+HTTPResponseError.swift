import CouchetteBLIP
import Hummingbird
import Logging

// MARK: - HTTPResponseError

/// The one place errors become HTTP responses: the status line, the JSON body and the headers an error's status and
/// ``GatewayError/remedy`` call for.
extension GatewayError: HTTPResponseError {
    /// The challenge every 401 carries, as Couchbase Lite expects it.
    static let challenge = #"Basic realm="Couchbase Sync Gateway""#

    /// The HTTP status of ``statusCode``.
    public var status: HTTPResponse.Status {
        HTTPResponse.Status(code: statusCode, reasonPhrase: Self.reasonPhrase(forStatus: statusCode))
    }

    /// The response headers: `WWW-Authenticate` for a 401, and `Allow`, `Retry-After` or `Content-Range` for a
    /// remedy.
    var responseHeaders: HTTPFields {
        var headers = HTTPFields()
        if statusCode == 401 { headers[.syncGatewayChallenge] = Self.challenge }
        switch remedy {
        case .allowedMethods(let methods)?: headers[.allow] = methods.joined(separator: ", ")
        case .retryAfter(let seconds)?: headers[.retryAfter] = String(seconds)
        case .rangeWithin(let length)?: headers[.contentRange] = "bytes */\(length)"
        case nil: break
        }
        return headers
    }

    /// Renders `{"error": NAME, "reason": REASON}` with the error's status (spec: gateway-rest-api.md §1.4).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONRenderer().response(for: self, method: request.method)
    }

    /// Any error a handler throws as a ``GatewayError``: Hummingbird's own errors keep their status, anything
    /// else is a 500 (logged, since it is a bug).
    static func from(_ error: any Error, logger: Logger) -> GatewayError {
        switch error {
        case let error as GatewayError:
            return error
        case let error as HTTPError:
            return GatewayError(
                statusCode: Int(error.status.code),
                reason: error.body ?? GatewayError.reasonPhrase(forStatus: Int(error.status.code)))
        case let error as any HTTPResponseError:
            return GatewayError(statusCode: Int(error.status.code), reason: error.status.reasonPhrase)
        default:
            logger.error("Unexpected error handling request", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError("Internal error")
        }
    }
}
