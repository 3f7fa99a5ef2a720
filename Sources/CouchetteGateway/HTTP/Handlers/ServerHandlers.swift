import Hummingbird

// MARK: - ServerHandlers

/// Server-level endpoints (spec: gateway-rest-api.md §3).
struct ServerHandlers: Sendable {
    // MARK: - Properties

    /// The listener these handlers serve; the admin listener's welcome says `"ADMIN": true`.
    let listener: GatewayListener

    /// The JSON renderer.
    let renderer: JSONRenderer

    // MARK: - GET /

    /// `GET /` and `HEAD /`: the welcome document.
    @Sendable func welcome(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        try renderer.response(Self.welcomeObject(listener: listener))
    }

    /// The welcome document: `{"couchdb":"Welcome","vendor":{…},"version":"…"}`, plus `"ADMIN": true` on the admin
    /// listener.
    static func welcomeObject(listener: GatewayListener) -> [String: any Sendable] {
        var object: [String: any Sendable] = [
            "couchdb": "Welcome",
            "vendor": ["name": GatewayVersion.productName, "version": GatewayVersion.version] as [String: any Sendable],
            "version": GatewayVersion.versionString,
        ]
        if listener == .admin { object["ADMIN"] = true }
        return object
    }
}
