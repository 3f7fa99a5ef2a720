import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

// MARK: - ChangesWebSocket

/// Decides WebSocket upgrades of `GET /{db}/_changes?feed=websocket` (spec: gateway-rest-api.md §11.4).
///
/// Upgrades happen in the HTTP/1 channel, before routing and middleware, so this resolves the database and
/// authenticates the caller itself, as ``DatabaseResolver`` does for routed requests. Requests for other paths
/// are refused (HTTP 400). Errors found before the feed starts (unknown database, bad credentials, database
/// offline, bad options) are reported by accepting the upgrade and, once the client sent its options, closing the
/// socket with code `4000 + status` (e.g. 4401, 4404, 4503) and the error's reason, since the upgrade path cannot
/// send a JSON error response.
///
/// ```swift
/// Application(router: router, server: ChangesRoutes.server(environment), …)
/// ```
struct ChangesWebSocket: Sendable {
    /// The upgrade decision's handler type.
    typealias Handler = WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>

    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - Upgrade

    /// Whether to upgrade `head`, and the handler running the feed if so.
    func shouldUpgrade(_ head: HTTPRequest, channel: any Channel, logger: Logger) async
        -> ShouldUpgradeResult<Handler>
    {
        let uri = URI(head.path ?? "/")
        guard let databaseName = DatabaseResolver.databaseName(inPath: uri.path, endpoint: "_changes") else { return .dontUpgrade }
        let query = ChangesHandlers.queryParameters(of: uri)
        do {
            let request = Request(head: head, body: .init(buffer: ByteBuffer()))
            let context = GatewayRequestContext(source: .init(channel: channel, logger: logger))
            let database = try await environment.registry.requireDatabase(named: databaseName)
            let caller = try await environment.resolver.authenticate(
                request, context: context, database: database, login: .required)
            try database.requireOnline()
            let session = ChangesWebSocketSession(
                database: database, caller: caller, query: query, config: environment.config)
            return .upgrade(context.extraResponseHeaders.all) { inbound, outbound, context in
                await session.run(inbound: inbound, outbound: outbound, logger: context.logger)
            }
        } catch {
            return .upgrade([:]) { inbound, outbound, _ in
                await Self.awaitFirstMessage(inbound)
                try await Self.close(outbound, with: error)
            }
        }
    }

    /// How long a refused socket waits for the client's first message before closing anyway.
    static let refusalDelay = Duration.seconds(5)

    /// Waits for the client's first message (its options), the end of the input, or ``refusalDelay``.
    ///
    /// A close frame sent right after the upgrade response can reach a client that is still setting up its
    /// WebSocket pipeline; HummingbirdWSClient then never sees it. Clients send their options first, so by
    /// then they are ready.
    static func awaitFirstMessage(_ inbound: WebSocketInboundStream) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var frames = inbound.makeAsyncIterator()
                _ = try? await frames.next()
            }
            group.addTask {
                try? await Task.sleep(for: refusalDelay)
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Closes a socket with the code and reason of an error: `4000 + status`.
    static func close(_ outbound: WebSocketOutboundWriter, with error: GatewayError) async throws {
        try await outbound.close(.unknown(UInt16(4000 + error.statusCode)), reason: error.reason)
    }
}
