import CouchetteBLIP
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import NIOCore
import NIOSSL

// MARK: - ChangesRoutes

/// `_changes` routes (spec: gateway-rest-api.md §11): `GET`/`HEAD`/`POST /{db}/_changes` for normal, longpoll
/// and continuous feeds, and the HTTP/1 server whose WebSocket upgrades serve `feed=websocket` and Couchbase Lite's
/// `/{db}/_blipsync` (``BLIPSyncUpgrade``); `GET /{db}/_blipsync` without an upgrade answers its error.
enum ChangesRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = ChangesHandlers(environment: environment)
        return [
            GatewayRoute(.get, "/{db}/_changes", handlers.get),
            GatewayRoute(.post, "/{db}/_changes", handlers.post),
            GatewayRoute(.get, "/{db}/_blipsync", blipSyncWithoutUpgrade(environment)),
        ]
    }

    /// `GET /{db}/_blipsync` that was not upgraded: the database's and the caller's errors first (404, 401 with its
    /// challenge, 503), else 400 for a request that is no WebSocket upgrade offering a subprotocol spoken here.
    static func blipSyncWithoutUpgrade(_ environment: RouteEnvironment) -> GatewayRoute.Handler {
        { request, context in
            _ = try await environment.resolver.resolve(request, context: context)
            throw GatewayError.badRequest(
                "_blipsync needs a WebSocket upgrade offering the subprotocol "
                    + BLIPSubprotocol.spoken.joined(separator: " or "))
        }
    }

    /// HTTP/1 with the WebSocket upgrades of `GET /{db}/_changes?feed=websocket` and `GET /{db}/_blipsync` (other
    /// upgrades are refused),
    /// behind a ``ConnectionGuard`` enforcing `limits`, and over TLS when `tls` is set (HTTPS and WSS); a connection
    /// whose first request is a continuous feed is served by `detacher`, without a task of its own.
    static func server(
        _ environment: RouteEnvironment, limits: ConnectionLimits, tls: TLSConfiguration?,
        detacher: ContinuousFeedDetacher
    ) -> HTTPServerBuilder {
        let webSocket = ChangesWebSocket(environment: environment)
        let blip = BLIPSyncUpgrade(environment: environment)
        let log = environment.log
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(http1: limits.http1Configuration)
        return HTTPServerBuilder { responder in
            let http = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration) {
                head, channel, logger in
                if BLIPSyncUpgrade.handles(head.path ?? "/") {
                    return await blip.shouldUpgrade(head, channel: channel, logger: logger)
                }
                return await webSocket.shouldUpgrade(head, channel: channel, logger: logger)
            }
            let guarded = GuardedHTTPChannel(
                base: http, limits: limits,
                upgradeGate: {
                    UpgradeGate(applies: BLIPSyncUpgrade.isCheckedUpgrade) { head, channel in
                        await blip.refusal(of: head, channel: channel).map(BLIPSyncUpgrade.answer)
                    }
                },
                detaching: detacher.rule
            ) { line in log.logger.warning("HTTP: \(line)") }
            guard let tls else { return guarded }
            return try TLSChannel(guarded, tlsConfiguration: tls)
        }
    }
}
