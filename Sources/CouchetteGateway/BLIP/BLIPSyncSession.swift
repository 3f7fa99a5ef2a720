import CouchetteBLIP
import CouchetteCore
import HummingbirdWebSocket
import Logging
import NIOCore

// MARK: - BLIPSyncSession

/// One Couchbase Lite replication connection (`/{db}/_blipsync`), the gateway's passive side of the BLIP sync
/// protocol (spec: blip-sync-protocol.md §3): answers the client's requests as the user who opened it.
///
/// Messages handled so far: `getCheckpoint` and `setCheckpoint` (checkpoints kept as the local documents
/// `_local/checkpoint/{client}`, as Sync Gateway keeps them), `subChanges` (``BLIPPullFeed``), and a push's
/// `proposeChanges` or `changes` and `rev` (``BLIPPushReceiver``), `getAttachment` for the attachments of revisions sent.
/// Others get `ERR BLIP/404`.
struct BLIPSyncSession: Sendable {
    /// The database and the caller.
    let target: AuthorizedDatabase
    /// The negotiated subprotocol (`BLIP_3+CBMobile_3` or `…_2`).
    let subprotocol: String
    /// The attachments the client may fetch now.
    let allowance = BLIPAttachmentAllowance()
    /// Whether the client takes deltas.
    let deltas = BLIPDeltaNegotiation()
    /// Stores the pushed `rev`s together.
    let revisions = BLIPRevisionBatcher()
    /// The connection's `subChanges` subscriptions, stopped when it ends.
    let subscriptions = BLIPSubscriptions()
    /// What the connection says in the log, and its counts.
    let log: BLIPSessionLog

    init(target: AuthorizedDatabase, subprotocol: String, log: BLIPSessionLog) {
        self.target = target
        self.subprotocol = subprotocol
        self.log = log
    }

    /// The largest WebSocket message (one BLIP frame) accepted.
    static let maximumFrameSize = 1 << 20

    // MARK: - Running

    /// Runs the connection until either side closes it; frames ready together are written to `channel` at once.
    func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, logger: Logger
    ) async {
        let transport = WebSocketBLIPTransport(outbound: outbound, channel: channel)
        let connection = BLIPConnection(transport: transport) { request, connection in
            await handle(request, on: connection)
        }
        log.opened(subprotocol: subprotocol)
        let error = await transport.feed(inbound, to: connection, maximumFrameSize: Self.maximumFrameSize)
        subscriptions.stopAll()
        log.closed()
        if let error { logger.debug("BLIP connection ended", metadata: ["error": "\(error)"]) }
    }

    // MARK: - Requests

    /// The response to one request.
    func handle(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        if Self.startsWork(request), !credentialsStillValid() {
            // As a REST request with those credentials would be now: 401 (the client stops and closes the connection).
            return request.errorReply(domain: "HTTP", code: 401, message: "Login required")
        }
        switch request.profile {
        case "getCheckpoint": return getCheckpoint(request)
        case "setCheckpoint": return setCheckpoint(request)
        case "subChanges": return await subChanges(request, on: connection)
        case "proposeChanges": return pushReceiver.proposeChanges(request)
        case "changes": return pushReceiver.changes(request)
        case "rev": return await pushReceiver.revision(request, on: connection)
        case "norev":
            // A revision asked for that the client cannot send (§3.7).
            revisions.settle()
            return request.reply()
        case "getAttachment": return await getAttachment(request)
        default: return request.unhandledReply()
        }
    }

    private var pushReceiver: BLIPPushReceiver { BLIPPushReceiver(target: target, batcher: revisions, log: log) }

    /// `getCheckpoint` (§3.1): the checkpoint's `rev` and body, or `ERR HTTP/404`.
    func getCheckpoint(_ request: BLIPMessage) -> BLIPMessage {
        guard let client = request.properties["client"], !client.isEmpty else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing client")
        }
        do {
            let stored = try target.localDocument(id: Self.checkpointID(client))
            guard case .object(var members) = stored, let revision = members["_rev"]?.stringValue else {
                return request.errorReply(domain: "HTTP", code: 500, message: "unreadable checkpoint")
            }
            members["_id"] = nil
            members["_rev"] = nil
            return request.reply(properties: ["rev": revision], body: JSONValue.object(members).serialized())
        } catch {
            return Self.errorReply(to: request, error)
        }
    }

    /// `setCheckpoint` (§3.2): stores the body if `rev` names the stored revision (empty or absent: none stored);
    /// replies with the new `rev`, else `ERR HTTP/409`.
    func setCheckpoint(_ request: BLIPMessage) -> BLIPMessage {
        guard let client = request.properties["client"], !client.isEmpty else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing client")
        }
        guard case .object(var members)? = try? JSONValue(parsing: request.body) else {
            return request.errorReply(domain: "HTTP", code: 400, message: "the checkpoint must be a JSON object")
        }
        let expected = request.properties["rev"].flatMap { $0.isEmpty ? nil : $0 }
        members["_rev"] = expected.map(JSONValue.string)
        do {
            let revision = try target.putLocalDocument(id: Self.checkpointID(client), body: .object(members))
            return request.reply(properties: ["rev": revision])
        } catch where error.statusCode == 404 || error.statusCode == 409 {
            return request.errorReply(domain: "HTTP", code: 409, message: "Document update conflict")
        } catch {
            return Self.errorReply(to: request, error)
        }
    }

    /// `subChanges` (§3.3): answers at once, then feeds `changes` (and the `rev`s the client wants) from `since`, in
    /// the caller's channels (narrowed by `sync_gateway/bychannel`, or to the body's `docIDs`), until caught up or,
    /// with `continuous`, until the connection closes (``BLIPPullFeed``; the handler returns once the changes there
    /// are now were handed to the connection). A `versioning` other than `rev-trees` is refused (409 for
    /// version vectors is what a rev-tree Sync Gateway answers; 400 here, with the reason).
    func subChanges(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        let properties = request.properties
        if let versioning = properties["versioning"], versioning != "rev-trees" {
            return request.errorReply(domain: "HTTP", code: 400, message: "this server keeps revision trees")
        }
        let continuous = properties.flag("continuous")
        // A document's current revision only, as Sync Gateway sends it (`style=main_only`): a client that keeps no
        // conflicts stores what it is sent as the document, so a conflict's losing or deleted branch must not reach it.
        // Couchette's replicator, which keeps conflicts, asks for every leaf with `style: all_docs`.
        var parameters: [String: String] = ["feed": continuous ? "continuous" : "normal"]
        if properties["style"] == "all_docs" { parameters["style"] = "all_docs" }
        if let since = properties["since"], !since.isEmpty {
            // JSON text: a number, or a string sequence with its quotes.
            parameters["since"] = (try? JSONValue(parsing: Array(since.utf8)))?.stringValue ?? since
        }
        if properties.flag("activeOnly") { parameters["active_only"] = "true" }
        if let filter = properties["filter"] {
            parameters["filter"] = filter
            parameters["channels"] = properties["channels"] ?? ""
        }
        if let body = try? JSONValue(parsing: request.body), case .array(let ids)? = body["docIDs"] {
            parameters["filter"] = "_doc_ids"
            parameters["doc_ids"] = JSONValue.array(ids).serializedString()
        }
        let revocations = properties.flag("revocations") && subprotocol == BLIPSubprotocol.couchbaseMobile3
        if revocations { parameters["revocations"] = "true" }
        let feed: ChangesFeed
        do throws(GatewayError) {
            let notifier = target.database.changeNotifier
            var options = try ChangesOptions(parameters: parameters, currentSequence: notifier.lastSequence)
            options.timeout = nil
            options.heartbeat = nil
            let reader = ChangesReader(database: target.database, caller: target.caller, options: options)
            feed = ChangesFeed(reader: reader, notifier: notifier)
        } catch {
            return Self.errorReply(to: request, error)
        }
        await connection.respond(to: request, with: request.reply())
        log.message(
            "subChanges since \(JSONValue.string(parameters["since"] ?? "0").serializedString())"
                + (continuous ? " (continuous)" : "") + (properties.flag("activeOnly") ? " (activeOnly)" : ""))
        let batch = properties["batch"].flatMap { Int($0) }.map { min(max($0, 1), 1_000) } ?? 200
        let subscription = BLIPPullFeed(
            feed, continuous: continuous, target: target, connection: connection, batchSize: batch,
            revocations: revocations, allowance: allowance, deltas: deltas, log: log)
        subscriptions.add(subscription)
        await subscription.start()
        return nil
    }

    /// `getAttachment` (§3.8): the bytes of `digest`, only while a revision naming it awaits the client's reply on
    /// this connection (`ERR HTTP/403` otherwise); deflated when the client asks with `compress`.
    func getAttachment(_ request: BLIPMessage) async -> BLIPMessage {
        guard let digest = request.properties["digest"], !digest.isEmpty else {
            return request.errorReply(domain: "BLIP", code: 400, message: "missing digest")
        }
        guard await allowance.permits(digest, of: request.properties["docID"]) else {
            return request.errorReply(domain: "HTTP", code: 403, message: "attachment not sent on this connection")
        }
        do {
            guard let bytes = try target.attachmentBytes(digest: digest) else {
                return request.errorReply(domain: "HTTP", code: 404, message: "missing")
            }
            return request.reply(body: bytes, isCompressed: request.properties.flag("compress"))
        } catch {
            return Self.errorReply(to: request, error)
        }
    }

    // MARK: - Credentials

    /// Requests that begin a unit of work (a batch, a subscription, a checkpoint): before each, the user's credentials
    /// are checked again (a `rev` belongs to the batch its `changes` began).
    private static func startsWork(_ request: BLIPMessage) -> Bool {
        ["getCheckpoint", "setCheckpoint", "subChanges", "changes", "proposeChanges"].contains(request.profile ?? "")
    }

    /// Whether the user who opened the connection still exists, is enabled and has the password they had then: a
    /// password changed or a user deleted on the admin port refuses their open connections' next batch.
    private func credentialsStillValid() -> Bool {
        guard let user = target.caller.user, !user.isGuest else { return true }
        guard let current = try? target.database.principals.user(named: user.name) else { return false }
        return !current.disabled && current.passwordHash == user.passwordHash
    }

    // MARK: - Helpers

    /// The local document holding a client's checkpoint, as Sync Gateway names it.
    static func checkpointID(_ client: String) -> String { "checkpoint/" + client }

    /// `ERR HTTP/<status>` with the error's reason.
    static func errorReply(to request: BLIPMessage, _ error: GatewayError) -> BLIPMessage {
        request.errorReply(domain: "HTTP", code: error.statusCode, message: error.reason)
    }
}
