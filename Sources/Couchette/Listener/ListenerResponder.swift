import CouchetteBLIP
import CouchetteCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOHTTP1

// MARK: - ListenerResponder

/// Answers a ``URLEndpointListener``'s requests: checks credentials, finds the served collection named by the
/// path's first segment and hands the request to its ``ListenerCollection``; every error becomes CouchDB's
/// `{"error", "reason"}` with the status of its ``CouchetteError``.
struct ListenerResponder: Sendable {
    /// The largest request body read (a document with inline attachments, a `_bulk_docs` batch).
    static let maximumBodySize = 256 << 20

    let collections: [String: ListenerCollection]
    let authenticator: ListenerPasswordAuthenticator?
    let readOnly: Bool

    init(collections: [Collection], authenticator: ListenerPasswordAuthenticator?, readOnly: Bool) {
        var served: [String: ListenerCollection] = [:]
        for (name, collection) in Self.servedNames(collections) {
            served[name] = ListenerCollection(name: name, collection: collection, readOnly: readOnly)
        }
        self.collections = served
        self.authenticator = authenticator
        self.readOnly = readOnly
    }

    /// The protocol database name of each collection: the database's name for the default collection, Sync
    /// Gateway's keyspace form `db.scope.collection` (`db.collection` in the default scope) for the others.
    static func servedNames(_ collections: [Collection]) -> [(name: String, collection: Collection)] {
        collections.map { collection in
            let database = collection.database.name
            if collection.scope.name == Database.defaultScopeName {
                return (collection.name == Database.defaultCollectionName ? database : "\(database).\(collection.name)", collection)
            }
            return ("\(database).\(collection.scope.name).\(collection.name)", collection)
        }
    }

    func respond(to request: Request) async -> Response {
        do {
            if let challenge = authenticationFailure(request) { return challenge }
            let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: true).map {
                String($0).removingPercentEncoding ?? String($0)
            }
            guard let first = segments.first else { return try welcome(request) }
            if first == "_all_dbs" {
                try Self.require(request, [.get, .head])
                return ListenerReply.json(.array(collections.keys.sorted().map(JSONValue.string)))
            }
            guard let served = collections[first] else {
                throw CouchetteError(.notFound, message: "no such database \"\(first)\"")
            }
            return try await served.respond(to: request, path: Array(segments.dropFirst()))
        } catch {
            return ListenerReply.error(CouchetteError.wrap(error))
        }
    }

    /// Whether to upgrade `head` to a BLIP replication connection: `GET /{db}/_blipsync` of a served collection,
    /// offering a replication subprotocol spoken here, with the listener's credentials when it has an authenticator.
    /// The ``UpgradeGate`` answered refused credentials (401) and unknown paths (404) before; they are checked again
    /// here because this decision grants the connection (a constant-time compare), and an upgrade declined here (no
    /// subprotocol in common) gets Hummingbird's 400.
    func blipUpgrade(
        _ head: HTTPRequest, channel: any Channel
    ) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard let name = Self.blipDatabaseName(head.path ?? "/"), let served = collections[name],
            let subprotocol = BLIPSubprotocol.chosen(offered: head.headerFields[values: .secWebSocketProtocol]),
            authorizes(head.headerFields[.authorization])
        else { return .dontUpgrade }
        let session = PassiveSyncSession(
            store: ListenerSyncStore(collection: served.collection, readOnly: readOnly), subprotocol: subprotocol)
        return .upgrade([.secWebSocketProtocol: subprotocol]) { inbound, outbound, _ in
            await session.run(inbound: inbound, outbound: outbound, channel: channel)
        }
    }

    /// Whether `head` asks to upgrade a `/{db}/_blipsync` path (``UpgradeGate``).
    static let isBLIPUpgrade: UpgradeGate.Applies = { head in
        head.method == .GET && blipDatabaseName(head.uri) != nil
            && head.headers[canonicalForm: "upgrade"].contains { $0.lowercased() == "websocket" }
    }

    /// Why a BLIP upgrade is refused before upgrading — 404 for a collection not served, 401 with the Basic challenge
    /// without accepted credentials (a Couchbase Lite peer sends them only after that challenge) — or nil.
    func blipRefusal(_ head: HTTPRequestHead) -> UpgradeGate.Refusal? {
        let error: CouchetteError
        var headers: [(name: String, value: String)] = []
        if collections[Self.blipDatabaseName(head.uri) ?? ""] == nil {
            error = CouchetteError(.notFound, message: "no such database")
        } else if !authorizes(head.headers["authorization"].first) {
            error = CouchetteError(.unauthorized, message: "Login required")
            headers.append(ListenerReply.challenge)
        } else {
            return nil
        }
        return UpgradeGate.Refusal(
            status: error.status, headers: headers, body: ListenerReply.errorBody(error).serialized())
    }

    /// The decoded `{db}` of a `/{db}/_blipsync` path (query left out), or nil for other paths.
    static func blipDatabaseName(_ path: String) -> String? {
        let segments = (path.split(separator: "?", maxSplits: 1).first ?? "").split(separator: "/")
        guard segments.count == 2, segments[1] == "_blipsync" else { return nil }
        return String(segments[0]).removingPercentEncoding ?? String(segments[0])
    }

    /// `GET /`: who is serving.
    private func welcome(_ request: Request) throws -> Response {
        try Self.require(request, [.get, .head])
        return ListenerReply.json([
            "couchdb": "Welcome", "vendor": ["name": "Couchette", "version": .string(Database.version)],
            "version": .string(Database.version),
        ])
    }

    /// The 401 answer to a request whose Basic credentials are missing or refused; nil when it may go on.
    private func authenticationFailure(_ request: Request) -> Response? {
        if authorizes(request.headers[.authorization]) { return nil }
        var response = ListenerReply.error(CouchetteError(.unauthorized, message: "Login required"))
        response.headers[.syncGatewayChallenge] = ListenerReply.challenge.value
        return response
    }

    /// Whether a request with this `Authorization` header may go on: always without an authenticator, else with Basic
    /// credentials it accepts.
    private func authorizes(_ authorization: String?) -> Bool {
        guard let authenticator else { return true }
        guard let authorization, let credentials = BasicCredentials(authorization: authorization) else { return false }
        return authenticator.authenticate(credentials.username, credentials.password)
    }

    /// Refuses a method the endpoint does not take (405).
    static func require(_ request: Request, _ methods: Set<HTTPRequest.Method>) throws {
        guard methods.contains(request.method) else {
            throw CouchetteError(.badInput, message: "Method \(request.method) not allowed here", status: 405)
        }
    }
}
