import CouchetteCore
import HTTPTypes
import Hummingbird
import NIOCore

// MARK: - ListenerReply

/// The responses of a ``URLEndpointListener``: JSON bodies and CouchDB's error form.
enum ListenerReply {
    /// `value` as JSON with `status`.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serialized())))
    }

    /// `{"error": name, "reason": message}` with the error's status.
    static func error(_ error: CouchetteError) -> Response {
        json(errorBody(error), status: HTTPResponse.Status(code: error.status))
    }

    /// CouchDB's error body.
    static func errorBody(_ error: CouchetteError) -> JSONValue {
        ["error": .string(error.errorName), "reason": .string(error.message)]
    }

    /// The challenge a request without accepted credentials gets.
    static let challenge = (name: "WWW-Authenticate", value: "Basic realm=\"Couchette\"")
}
