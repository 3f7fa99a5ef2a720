import CouchetteCore
import Hummingbird

// MARK: - Responses

extension MultipartBody {
    /// An HTTP response carrying the body, with its `Content-Type`.
    ///
    /// ```swift
    /// return MultipartBody(subtype: "mixed", parts: parts).response(headers: etag)
    /// ```
    func response(status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: serialized())))
    }
}
