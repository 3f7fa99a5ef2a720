import Foundation
import Hummingbird

// MARK: - OpenAPIHandlers

/// `GET /_openapi/public.yaml` (public port) and `GET /_openapi/admin.yaml` (admin port): the OpenAPI 3.1
/// description of the listener's REST API, shipped with the gateway (`openapi/` in the repository).
struct OpenAPIHandlers: Sendable {
    /// The listener whose description is served.
    let listener: GatewayListener

    /// The description's file name.
    var fileName: String { listener == .admin ? "admin.yaml" : "public.yaml" }

    /// Serves the description as `application/yaml`.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let bytes = Self.description(fileName) else {
            throw GatewayError.notFound("The OpenAPI description is not installed with this gateway")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/yaml"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The bytes of a description file from the gateway's resources.
    static func description(_ fileName: String) -> [UInt8]? {
        let name = (fileName as NSString).deletingPathExtension
        guard let url = Bundle.module.url(forResource: name, withExtension: "yaml", subdirectory: "openapi"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return Array(data)
    }
}
