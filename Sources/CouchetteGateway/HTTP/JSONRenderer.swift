import CouchetteCore
import Foundation
import Hummingbird

// MARK: - JSONRenderer

/// Turns JSON objects into HTTP responses: `JSONSerialization` with sorted keys, pretty-printed when the
/// configuration's `pretty` is set, served as `application/json`.
///
/// ```swift
/// let renderer = JSONRenderer(pretty: false)
/// let response = renderer.response(["ok": true])  // 200 {"ok":true}
/// ```
public struct JSONRenderer: Sendable {
    // MARK: - Properties

    /// Whether output is pretty-printed.
    public var pretty: Bool

    // MARK: - Initialiser

    /// Creates a renderer.
    public init(pretty: Bool = false) {
        self.pretty = pretty
    }

    // MARK: - Encoding

    /// The JSON encoding of `object` (a dictionary, array, string, number, boolean or `NSNull`).
    ///
    /// - Throws: ``GatewayError/internalError(_:)`` when `object` is not representable as JSON.
    public func data(_ object: Any) throws(GatewayError) -> Data {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw .internalError("Internal error: response is not valid JSON")
        }
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        do {
            return try JSONSerialization.data(withJSONObject: object, options: options)
        } catch {
            throw .internalError("Internal error: \(error.localizedDescription)")
        }
    }

    // MARK: - Responses

    /// A JSON response.
    ///
    /// - Parameters:
    ///   - object: The JSON object.
    ///   - status: The HTTP status, default 200.
    ///   - headers: Extra headers.
    public func response(_ object: Any, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        throws(GatewayError)
        -> Response
    {
        Self.jsonResponse(try data(object), status: status, headers: headers)
    }

    /// A response with a ``JSONValue`` body, serialized with sorted keys (pretty when configured).
    public func response(json: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        response(jsonText: json.serialized(prettyPrinted: pretty), status: status, headers: headers)
    }

    /// A response with a body already written as JSON text (``JSONWriter``), as it is.
    public func response(jsonText bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:])
        -> Response
    {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The response for an error: `{"error": NAME, "reason": REASON}` with the error's status and headers.
    /// HEAD requests get the status and headers without a body.
    public func response(for error: GatewayError, method: HTTPRequest.Method = .get) -> Response {
        let body = errorBody(error)
        var response = Self.jsonResponse(body, status: error.status, headers: error.responseHeaders)
        if method == .head { response.body = .init() }
        return response
    }

    /// An error's body, `{"error": NAME, "reason": REASON}` (also written below Hummingbird, by ``UpgradeGate``).
    func errorBody(_ error: GatewayError) -> Data {
        (try? data(["error": error.error, "reason": error.reason])) ?? Data()
    }

    /// A response with a JSON body and `Content-Type: application/json`.
    static func jsonResponse(_ data: Data, status: HTTPResponse.Status, headers: HTTPFields) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
