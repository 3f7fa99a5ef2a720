// MARK: - CORSConfig

/// Cross-origin settings for the public port: the server-level `CORS` key (SG 1.x) or a database's `cors` key
/// (SG 3.x spelling).
///
/// ```json
/// "CORS": {"origin": ["http://example.com"], "loginOrigin": ["http://example.com"],
///          "headers": ["Content-Type"], "maxAge": 1728000}
/// ```
///
/// Spec: gateway-rest-api.md §1.5, §17.1.
public struct CORSConfig: Sendable, Equatable {
    // MARK: - Properties

    /// Allowed origins; `"*"` allows any.
    public var origins: [String]

    /// Origins allowed to create and delete sessions.
    public var loginOrigins: [String]

    /// Extra request headers allowed (`Access-Control-Allow-Headers`).
    public var headers: [String]

    /// Seconds a preflight answer may be cached (`Access-Control-Max-Age`).
    public var maxAge: Int?

    // MARK: - Initialiser

    /// Creates a CORS configuration.
    public init(origins: [String] = [], loginOrigins: [String] = [], headers: [String] = [], maxAge: Int? = nil) {
        self.origins = origins
        self.loginOrigins = loginOrigins
        self.headers = headers
        self.maxAge = maxAge
    }

    // MARK: - Parsing

    /// The accepted keys, in both the SG 1.x camel-case and SG 3.x snake-case spellings.
    static let knownKeys: Set<String> = ["origin", "loginOrigin", "login_origin", "headers", "maxAge", "max_age"]

    /// Reads CORS settings from their configuration object.
    init(object: ConfigObject, warnings: inout [String]) throws(GatewayError) {
        let loginOrigins = try object.stringArray("loginOrigin")
        let loginOriginsSnakeCase = try object.stringArray("login_origin")
        let maxAge = try object.integer("maxAge")
        let maxAgeSnakeCase = try object.integer("max_age")
        self.init(
            origins: try object.stringArray("origin") ?? [],
            loginOrigins: loginOrigins ?? loginOriginsSnakeCase ?? [],
            headers: try object.stringArray("headers") ?? [],
            maxAge: maxAge ?? maxAgeSnakeCase
        )
        for key in object.unknownKeys(known: Self.knownKeys) {
            warnings.append("\(object.fieldPath(key)): unknown key ignored")
        }
    }
}
