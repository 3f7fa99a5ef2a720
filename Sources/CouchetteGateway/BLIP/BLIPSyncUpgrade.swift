import CouchetteBLIP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

// MARK: - BLIPSyncUpgrade

/// Decides WebSocket upgrades of `GET /{db}/_blipsync`, Couchbase Lite's replication endpoint (spec:
/// blip-sync-protocol.md §1): the first subprotocol of the client's `Sec-WebSocket-Protocol` list the gateway speaks
/// is echoed in the `101` response, and the connection runs as the caller authenticated before the upgrade (Basic,
/// session cookie or `GUEST`), as Sync Gateway does.
///
/// An upgrade without credentials or with wrong Basic ones is answered before it gets here by an ``UpgradeGate`` (401
/// with the Basic challenge, which Couchbase Lite answers by retrying with its credentials, unless `GUEST` may
/// replicate; 404 for an unknown database, 503 when it is offline). Other upgrades this declines — no subprotocol in
/// common, a stale session cookie — get Hummingbird's 400; a `GET` that asks for no upgrade is answered by the
/// `GET /{db}/_blipsync` route with the database's or caller's error.
struct BLIPSyncUpgrade: Sendable {
    /// The upgrade decision's handler type.
    typealias Handler = WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>

    /// The listener's environment.
    let environment: RouteEnvironment

    /// Whether `path` is a `/{db}/_blipsync` path.
    static func handles(_ path: String) -> Bool {
        databaseName(inPath: URI(path).path) != nil
    }

    /// Whether to upgrade `head`, and the handler running the connection if so.
    func shouldUpgrade(_ head: HTTPRequest, channel: any Channel, logger: Logger) async -> ShouldUpgradeResult<Handler> {
        let uri = URI(head.path ?? "/")
        guard let databaseName = Self.databaseName(inPath: uri.path),
            let subprotocol = BLIPSubprotocol.chosen(offered: head.headerFields[values: .secWebSocketProtocol])
        else { return .dontUpgrade }
        let request = Request(head: head, body: .init(buffer: ByteBuffer()))
        let context = GatewayRequestContext(source: .init(channel: channel, logger: logger))
        let target: AuthorizedDatabase
        do {
            let database = try await environment.registry.requireDatabase(named: databaseName)
            let caller = try await environment.resolver.authenticate(
                request, context: context, database: database, login: .required)
            try database.requireOnline()
            target = AuthorizedDatabase(database: database, caller: caller)
        } catch {
            return .dontUpgrade
        }
        var headers = context.extraResponseHeaders.all
        headers[.secWebSocketProtocol] = subprotocol
        let batcher = BLIPRevisionBatcher(executor: target.database.executor)
        let session = PassiveSyncSession(
            store: GatewaySyncStore(target: target, batcher: batcher), subprotocol: subprotocol,
            observer: BLIPSessionLog(log: environment.log, user: target.caller.user?.name ?? "admin"))
        return .upgrade(headers) { inbound, outbound, context in
            await session.run(inbound: inbound, outbound: outbound, channel: channel, logger: context.logger)
        }
    }

    /// Whether `head` asks to upgrade `/{db}/_blipsync` with Basic credentials or none (``UpgradeGate``): Couchbase
    /// Lite sends none first, expecting a `401` challenge unless `GUEST` may replicate, and wrong ones must get `401`
    /// too. An upgrade with only a session cookie goes straight to the upgrade, which authenticates it (checking it
    /// here would refresh the session where the new cookie cannot be sent).
    static let isCheckedUpgrade: UpgradeGate.Applies = { head in
        head.method == .GET && handles(head.uri)
            && head.headers[canonicalForm: "upgrade"].contains { $0.lowercased() == "websocket" }
            && (!head.headers["authorization"].isEmpty
                || !head.headers["cookie"].contains { $0.contains(Session.cookieName + "=") })
    }

    /// Why an upgrade of `head` is refused before upgrading: 404 for an unknown database, 401 with the Basic challenge
    /// for wrong credentials or none when it has no enabled `GUEST`, 503 when it is offline; nil when it may go on (to
    /// the upgrade, which authenticates it again: a password verified here is in the verification cache then).
    func refusal(of head: HTTPRequestHead, channel: any Channel) async -> GatewayError? {
        guard let name = Self.databaseName(inPath: URI(head.uri).path) else { return nil }
        do throws(GatewayError) {
            let database = try await environment.registry.requireDatabase(named: name)
            guard let converted = try? HTTPRequest(head, secure: false, splitCookie: false) else {
                return .badRequest("Unreadable request head")
            }
            let request = Request(head: converted, body: .init(buffer: ByteBuffer()))
            let context = GatewayRequestContext(source: .init(channel: channel, logger: environment.log.logger))
            _ = try await environment.resolver.authenticate(request, context: context, database: database, login: .required)
            try database.requireOnline()
            return nil
        } catch {
            return error
        }
    }

    /// A refusal as the gate writes it: the error's status, headers and JSON body, as every response renders it.
    static func answer(_ error: GatewayError) -> UpgradeGate.Refusal {
        var headers = error.responseHeaders.map { (name: $0.name.rawName, value: $0.value) }
        headers.append((name: "Server", value: GatewayVersion.serverHeader))
        return UpgradeGate.Refusal(status: error.statusCode, headers: headers, body: Array(JSONRenderer().errorBody(error)))
    }

    /// The decoded `{db}` of a `/{db}/_blipsync` path, or nil for other paths.
    static func databaseName(inPath path: String) -> String? {
        DatabaseResolver.databaseName(inPath: path, endpoint: "_blipsync")
    }
}
