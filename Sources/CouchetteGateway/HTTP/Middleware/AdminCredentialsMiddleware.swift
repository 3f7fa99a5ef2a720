import CouchetteCore
import Hummingbird

// MARK: - AdminCredentialsMiddleware

/// Requires the configured `adminUsername`/`adminPassword` as Basic credentials on every admin-port request when
/// they are set; without them the admin port trusts whoever can reach it (loopback by default).
///
/// Missing or wrong credentials get 401 with `WWW-Authenticate`. Name and password are both compared in
/// constant time (``ConstantTime``), and both always, so timing tells nothing about which was wrong.
struct AdminCredentialsMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    // MARK: - Properties

    /// The required credentials; `nil` lets every request through.
    let credentials: BasicCredentials?

    /// Renders the 401 (returned, not thrown, so that outer middleware logs and counts a 401).
    var renderer = JSONRenderer()

    // MARK: - Handling

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let credentials else { return try await next(request, context) }
        guard let header = request.headers[.authorization], let given = BasicCredentials(authorization: header) else {
            return renderer.response(for: .unauthorized("Login required"), method: request.method)
        }
        guard Self.matches(given, credentials) else {
            return renderer.response(for: .unauthorized("Invalid login"), method: request.method)
        }
        return try await next(request, context)
    }

    /// Whether `given` equals `expected`, comparing names and passwords in constant time.
    static func matches(_ given: BasicCredentials, _ expected: BasicCredentials) -> Bool {
        let sameName = ConstantTime.equals(given.username, expected.username)
        let samePassword = ConstantTime.equals(given.password, expected.password)
        return sameName && samePassword
    }
}
