import CouchetteCore
import Logging
import NIOCore
import WSCore

// MARK: - PassiveSyncSession

/// The passive side of the BLIP sync protocol (spec: blip-sync-protocol.md §3) over one connection, for any store
/// that can answer it (``PassiveSyncStore``): the gateway serves a user's view of a database with it, a Lite
/// ``URLEndpointListener`` a collection — one implementation, so that a Couchbase Lite 3 client syncs with both alike.
///
/// It answers `getCheckpoint` and `setCheckpoint`, `subChanges` (``SyncPullFeed``: `changes` batches, the `rev`s
/// asked for, `changes []` once caught up, then new changes when continuous), a push's `proposeChanges` or `changes`
/// and its `rev`s (deltas applied, attachments fetched or proved), `norev`, and `getAttachment` / `proveAttachment`
/// for the attachments of revisions being sent. Others get `ERR BLIP/404`.
///
/// ```swift
/// let session = PassiveSyncSession(store: store, subprotocol: subprotocol)
/// await session.run(inbound: inbound, outbound: outbound, channel: channel)
/// ```
public final class PassiveSyncSession: Sendable {
    /// What the session serves.
    public let store: any PassiveSyncStore
    /// The negotiated subprotocol (`BLIP_3+CBMobile_3` or `…_2`).
    public let subprotocol: String
    /// What the connection tells; nil for nothing.
    public let observer: (any SyncSessionObserver)?

    /// The attachments the client may fetch now.
    let allowance = SyncAttachmentAllowance()
    /// Whether the client takes deltas.
    let deltas = SyncDeltaNegotiation()
    /// The connection's `subChanges` subscriptions, stopped when it ends.
    let subscriptions = SyncSubscriptions()

    /// The largest WebSocket message (one BLIP frame) accepted.
    public static let maximumFrameSize = 1 << 20

    /// A session serving `store`.
    public init(store: any PassiveSyncStore, subprotocol: String, observer: (any SyncSessionObserver)? = nil) {
        self.store = store
        self.subprotocol = subprotocol
        self.observer = observer
    }

    // MARK: - Running

    /// Runs the connection until either side closes it, then stops its subscriptions; frames ready together are
    /// written to `channel` at once.
    public func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: (any Channel)?,
        logger: Logger? = nil
    ) async {
        let transport = WebSocketBLIPTransport(outbound: outbound, channel: channel)
        let connection = BLIPConnection(transport: transport, executor: store.executor) { [self] request, connection in
            await handle(request, on: connection)
        }
        observer?.opened(subprotocol: subprotocol)
        let error = await transport.feed(inbound, to: connection, maximumFrameSize: Self.maximumFrameSize)
        subscriptions.stopAll()
        observer?.closed()
        if let error { logger?.debug("BLIP connection ended", metadata: ["error": "\(error)"]) }
    }

    /// The response to one request.
    public func handle(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        if Self.startsWork(request), !store.admitsWork() {
            // As a REST request with those credentials would be now: 401 (the client stops and closes the connection).
            return request.errorReply(domain: "HTTP", code: 401, message: "Login required")
        }
        do {
            switch request.profile {
            case "getCheckpoint": return try await getCheckpoint(request)
            case "setCheckpoint": return try await setCheckpoint(request)
            case "subChanges": return try await subChanges(request, on: connection)
            case "proposeChanges": return try await proposeChanges(request)
            case "changes": return try await changes(request)
            case "rev": return await revision(request, on: connection)
            case "norev":
                // A revision asked for that the client cannot send (§3.7).
                store.settleRevision(documentID: request.properties["id"], revisionID: request.properties["rev"])
                return request.reply()
            case "getAttachment": return try await getAttachment(request)
            case "proveAttachment": return try await proveAttachment(request)
            default: return request.unhandledReply()
            }
        } catch {
            return errorReply(to: request, error)
        }
    }

    // MARK: - Checkpoints

    /// `getCheckpoint` (§3.1): the checkpoint's `rev` and body, or `ERR HTTP/404`.
    func getCheckpoint(_ request: BLIPMessage) async throws -> BLIPMessage {
        guard let stored = try await store.checkpoint(client: try Self.client(of: request)) else {
            throw BLIPError.refused(status: 404, reason: "missing")
        }
        return request.reply(properties: ["rev": stored.revision], body: JSONValue.object(stored.body).serialized())
    }

    /// `setCheckpoint` (§3.2): stores the body if `rev` names the stored revision (empty or absent: none stored);
    /// replies with the new `rev`, else `ERR HTTP/409`.
    func setCheckpoint(_ request: BLIPMessage) async throws -> BLIPMessage {
        let client = try Self.client(of: request)
        guard case .object(let members)? = try? JSONValue(parsing: request.body) else {
            throw BLIPError.refused(status: 400, reason: "the checkpoint must be a JSON object")
        }
        let expected = request.properties["rev"].flatMap { $0.isEmpty ? nil : $0 }
        let revision = try await store.saveCheckpoint(
            members.filter { !$0.key.hasPrefix("_") }, client: client, replacing: expected)
        return request.reply(properties: ["rev": revision])
    }

    /// The request's `client` (400 without one).
    private static func client(of request: BLIPMessage) throws(BLIPError) -> String {
        guard let client = request.properties["client"], !client.isEmpty else {
            throw .refused(status: 400, reason: "missing client")
        }
        return client
    }

    // MARK: - Serving a pull

    /// `subChanges` (§3.3): answers at once, then feeds `changes` (and the `rev`s the client wants) from `since`, as
    /// the store reads them for the subscription, until caught up or, with `continuous`, until the connection closes
    /// (``SyncPullFeed``; the handler returns once the changes there are now were handed to the connection). A
    /// `versioning` other than `rev-trees` is refused (400, with the reason; a rev-tree Sync Gateway answers 409).
    func subChanges(_ request: BLIPMessage, on connection: BLIPConnection) async throws -> BLIPMessage? {
        var subscription = SubChangesRequest(request)
        guard subscription.versioning == "rev-trees" else {
            throw BLIPError.refused(status: 400, reason: "this server keeps revision trees")
        }
        // Revocation entries are Couchbase Lite 3's.
        subscription.revocations = subscription.revocations && subprotocol == BLIPSubprotocol.couchbaseMobile3
        let source = try await store.subscribe(subscription, subprotocol: subprotocol)
        await connection.respond(to: request, with: request.reply())
        observer?.message("subChanges \(subscription.summary)")
        let feed = SyncPullFeed(source, subscription: subscription, session: self, connection: connection)
        subscriptions.add(feed)
        await feed.start()
        return nil
    }

    /// `getAttachment` (§3.8): the bytes of `digest`, only while a revision naming it awaits the client's reply on
    /// this connection (`ERR HTTP/403` otherwise); deflated when the client asks with `compress`.
    func getAttachment(_ request: BLIPMessage) async throws -> BLIPMessage {
        let content = try await allowedContent(request)
        return request.reply(body: content, isCompressed: request.properties.flag("compress"))
    }

    /// `proveAttachment` (§3.9), for an attachment of a revision being sent: the SHA-1 of the nonce's length, the
    /// nonce and the content, as a digest string.
    func proveAttachment(_ request: BLIPMessage) async throws -> BLIPMessage {
        guard (16...255).contains(request.body.count) else {
            throw BLIPError.refused(status: 400, reason: "the nonce must be 16 to 255 bytes")
        }
        let content = try await allowedContent(request)
        return request.reply(body: Array(AttachmentDigest.proof(of: content, nonce: request.body).description.utf8))
    }

    /// The content of the request's `digest` when the client may have it now (an attachment of a revision sent and
    /// not answered yet: serving any digest would let a user read attachments outside their channels).
    private func allowedContent(_ request: BLIPMessage) async throws -> [UInt8] {
        guard let digest = request.properties["digest"], !digest.isEmpty else {
            throw BLIPError.refused(status: 400, reason: "missing digest")
        }
        guard await allowance.permits(digest, of: request.properties["docID"]) else {
            throw BLIPError.refused(status: 403, reason: "attachment not sent on this connection")
        }
        guard let content = try await store.attachmentContent(digest: digest) else {
            throw BLIPError.refused(status: 404, reason: "missing")
        }
        return content
    }

    // MARK: - Errors

    /// Requests that begin a unit of work (a batch, a subscription, a checkpoint): before each, the store may refuse
    /// (``PassiveSyncStore/admitsWork()``; a `rev` belongs to the batch its offer began).
    private static func startsWork(_ request: BLIPMessage) -> Bool {
        ["getCheckpoint", "setCheckpoint", "subChanges", "changes", "proposeChanges"].contains(request.profile ?? "")
    }

    /// `ERR HTTP/<status>` with the error's reason.
    func errorReply(to request: BLIPMessage, _ error: any Error) -> BLIPMessage {
        let (status, reason) = failure(of: error)
        return request.errorReply(domain: "HTTP", code: status, message: reason)
    }

    /// The status and reason of `error`: a refusal's own, else the store's reading of it.
    func failure(of error: any Error) -> (status: Int, reason: String) {
        switch error {
        case BLIPError.refused(let status, let reason): (status, reason)
        case let error as CoreError: (error.status, error.message)
        default: store.failure(of: error)
        }
    }
}
