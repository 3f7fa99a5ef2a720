import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket

// MARK: - ChangesRoutes

/// `_changes` routes (spec: gateway-rest-api.md §11): `GET`/`HEAD`/`POST /{db}/_changes` for normal, longpoll
/// and continuous feeds, and the HTTP/1 server whose WebSocket upgrade serves `feed=websocket`.
enum ChangesRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = ChangesHandlers(environment: environment)
        return [
            GatewayRoute(.get, "/{db}/_changes", handlers.get),
            GatewayRoute(.post, "/{db}/_changes", handlers.post),
        ]
    }

    /// HTTP/1 with the WebSocket upgrade of `GET /{db}/_changes?feed=websocket` (other upgrades are refused).
    static func server(_ environment: RouteEnvironment) -> HTTPServerBuilder {
        let webSocket = ChangesWebSocket(environment: environment)
        return .http1WebSocketUpgrade(configuration: .init()) { head, channel, logger in
            await webSocket.shouldUpgrade(head, channel: channel, logger: logger)
        }
    }
}
