import Hummingbird
import Logging

// MARK: - RequestLogMiddleware

/// Logs one line per request when the `HTTP` log key is enabled (checked per request, so `PUT /_logging`
/// applies at once): listener, method, path, status, duration.
///
/// ```text
/// HTTP: GET /todo/ -> 200 (0.3 ms) [admin]
/// ```
///
/// Only the method and the path are logged: never headers (`Authorization`, cookies), query strings or bodies.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    // MARK: - Properties

    /// The listener, shown in each line.
    let listener: GatewayListener

    /// The log lines go to.
    let log: GatewayLog

    // MARK: - Handling

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard log.isEnabled(LogKeys.http) else { return try await next(request, context) }
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, status: Int(response.status.code), since: start)
            return response
        } catch {
            log(request, status: 500, since: start)
            throw error
        }
    }

    private func log(_ request: Request, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        let rounded = (milliseconds * 10).rounded() / 10
        log(LogKeys.http, "\(request.method.rawValue) \(request.uri.path) -> \(status) (\(rounded) ms) [\(listener.rawValue)]")
    }
}
