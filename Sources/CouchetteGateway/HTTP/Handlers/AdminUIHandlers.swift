import Foundation
import Hummingbird

// MARK: - AdminUIHandlers

/// The Admin UI on the admin port (`/_admin/`): hand-written HTML, CSS and JavaScript modules shipped as the
/// gateway's resources (`Resources/admin`), which call the admin REST API from the browser. Every page has a URL —
/// `/_admin/db/{db}`, `/_admin/db/{db}/sync`, `/_admin/db/{db}/users`, `/_admin/db/{db}/documents/{id}` — and each
/// answers with the same page, whose script shows what the URL names.
struct AdminUIHandlers: Sendable {
    /// `GET /_admin/…`: the page.
    @Sendable func page(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        try Self.response(file: "index.html")
    }

    /// `GET /_admin/assets/{file}`: a script, style sheet or image of the page.
    @Sendable func asset(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let name = try context.pathSegment("file")
        guard !name.contains("/"), !name.hasPrefix(".") else { throw GatewayError.notFound("missing") }
        return try Self.response(file: name)
    }

    /// A resource's bytes with its content type; the browser asks again each time (`no-cache`), so a gateway
    /// upgrade shows at once.
    static func response(file name: String) throws -> Response {
        let base = (name as NSString).deletingPathExtension
        let fileExtension = (name as NSString).pathExtension
        guard let type = contentTypes[fileExtension],
            let url = Bundle.module.url(forResource: base, withExtension: fileExtension, subdirectory: "admin"),
            let data = try? Data(contentsOf: url)
        else { throw GatewayError.notFound("missing") }
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        headers[.init("Content-Security-Policy")!] =
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]
}
