import CouchetteBLIP
import CouchetteCore
import Foundation
import NIOCore
import Synchronization
import WSCore

// MARK: - ListenerBLIPSession

/// One BLIP replication connection to a ``URLEndpointListener`` (`/{db}/_blipsync`, spec: blip-sync-protocol.md §3):
/// the passive side of Couchbase Lite's replication protocol over one served collection, so that another Couchette
/// (or a Couchbase Lite 3 peer) replicates with it as with a gateway.
///
/// It answers `getCheckpoint` / `setCheckpoint` (local documents, as the REST side keeps `_local` checkpoints),
/// `subChanges` (feeds `changes` from `since`, then the `rev`s asked for, one batch at a time; continuous when asked),
/// a push's `changes` or `proposeChanges` and its `rev`s (stored as revisions made elsewhere), and the other side's
/// `getAttachment` and `proveAttachment` for revisions being sent. Revisions go through the same ``ReplicationPeer``
/// of the collection the REST endpoints use, and the same `rev` codec as the replicator (``BLIPRevisionMessage``).
///
/// A listener has no channels: a `subChanges` filter is refused. It sends whole bodies (it announces no delta sync,
/// so a peer sends whole bodies too).
final class ListenerBLIPSession: Sendable {
    /// The served collection.
    let collection: Collection
    /// Whether pushed revisions are refused (403 each).
    let readOnly: Bool
    /// The negotiated subprotocol.
    let subprotocol: String

    private let local: BLIPLocalContent
    private let offered: BLIPOfferedContent
    /// The running `subChanges` feeds by number, cancelled when the connection ends; each leaves when it finishes.
    private let feeds = Mutex<(next: Int, running: [Int: Task<Void, Never>])>((0, [:]))

    /// The largest WebSocket message (one BLIP frame) accepted.
    static let maximumFrameSize = 1 << 20
    /// The most `changes` entries in one message.
    static let maximumBatch = 1_000
    /// `changes` messages whose replies are awaited at once (LiteCore keeps 5 while catching up).
    static let maximumBatchesInFlight = 5
    /// How long a caught-up continuous feed waits for a change before looking again.
    static let idleWait: Duration = .seconds(60)

    init(collection: Collection, readOnly: Bool, subprotocol: String) {
        self.collection = collection
        self.readOnly = readOnly
        self.subprotocol = subprotocol
        local = BLIPLocalContent(collection: collection)
        offered = BLIPOfferedContent(local: local)
    }

    private var peer: LocalReplicationPeer { LocalReplicationPeer(collection: collection, autoPurge: false) }

    // MARK: - Running

    /// Runs the connection until either side closes it, then stops its feeds; frames ready together are written to
    /// `channel` at once.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel) async {
        let transport = WebSocketBLIPTransport(outbound: outbound, channel: channel)
        let connection = BLIPConnection(transport: transport) { [self] request, connection in
            await handle(request, on: connection)
        }
        await transport.feed(inbound, to: connection, maximumFrameSize: Self.maximumFrameSize)
        for feed in feeds.withLock({ $0.running.values }) { feed.cancel() }
    }

    /// The response to one request.
    func handle(_ request: BLIPMessage, on connection: BLIPConnection) async -> BLIPMessage? {
        do {
            switch request.profile {
            case "getCheckpoint": return try getCheckpoint(request)
            case "setCheckpoint": return try setCheckpoint(request)
            case "subChanges": return try subChanges(request, on: connection)
            case "changes": return try await changes(request)
            case "proposeChanges": return try proposeChanges(request)
            case "rev": return try await revision(request, on: connection)
            case "getAttachment": return offered.serveAttachment(request)
            case "proveAttachment": return offered.proveAttachment(request)
            default: return request.unhandledReply()
            }
        } catch {
            return BLIPRevisionMessage.errorReply(to: request, error)
        }
    }

    // MARK: - Checkpoints

    /// `getCheckpoint` (§3.1): the checkpoint's `rev` and body, or `ERR HTTP/404`.
    private func getCheckpoint(_ request: BLIPMessage) throws -> BLIPMessage {
        guard var stored = try collection.database.localDocument(withID: try checkpointID(request)) else {
            throw CouchetteError(.notFound, message: "missing")
        }
        let revision = stored["_rev"] as? String ?? ""
        stored = stored.filter { !$0.key.hasPrefix("_") }
        return request.reply(properties: ["rev": revision], body: try JSONValue(foundationObject: stored).serialized())
    }

    /// `setCheckpoint` (§3.2): stores the body if `rev` names the stored revision (empty or absent: none stored);
    /// replies with the new `rev`, else `ERR HTTP/409`.
    private func setCheckpoint(_ request: BLIPMessage) throws -> BLIPMessage {
        let id = try checkpointID(request)
        guard case .object(let members)? = try? JSONValue(parsing: request.body) else {
            throw CouchetteError(.badInput, message: "the checkpoint must be a JSON object", status: 400)
        }
        let expected = request.properties["rev"].flatMap { $0.isEmpty ? nil : $0 }
        let database = collection.database
        var revision = ""
        try database.inBatch {
            let current = try database.localDocument(withID: id)?["_rev"] as? String
            guard current == expected else { throw CouchetteError(.conflict, message: "Document update conflict") }
            var properties = members.filter { !$0.key.hasPrefix("_") }.mapValues(DocumentValues.value(from:))
            properties["_rev"] = current
            revision = try database.putLocalDocument(properties, withID: id)
        }
        return request.reply(properties: ["rev": revision])
    }

    /// The local document of the request's `client`, beside the REST side's checkpoints of the collection.
    private func checkpointID(_ request: BLIPMessage) throws -> String {
        guard let client = request.properties["client"], !client.isEmpty else {
            throw CouchetteError(.badInput, message: "missing client", status: 400)
        }
        return peer.localID("checkpoint/" + client)
    }

    // MARK: - Serving a pull

    /// `subChanges` (§3.3): answers at once, then feeds the changes after `since` (JSON text) in batches of `batch`,
    /// narrowed to the body's `docIDs` and, with `activeOnly`, to live documents; `changes []` once caught up, and
    /// with `continuous` the later changes as they come, until the connection closes.
    private func subChanges(_ request: BLIPMessage, on connection: BLIPConnection) throws -> BLIPMessage? {
        let properties = request.properties
        if let versioning = properties["versioning"], versioning != "rev-trees" {
            throw CouchetteError(.badInput, message: "this listener keeps revision trees", status: 400)
        }
        if properties["filter"] != nil {
            throw CouchetteError(.badInput, message: "a listener has no channels or filters", status: 400)
        }
        let since = properties["since"].flatMap { text in
            (try? JSONValue(parsing: Array(text.utf8))).flatMap { $0.intValue.map(String.init) ?? $0.stringValue }
        }
        var documentIDs: Set<String>?
        if let body = try? JSONValue(parsing: request.body), case .array(let ids)? = body["docIDs"] {
            documentIDs = Set(ids.compactMap(\.stringValue))
        }
        let feed = Feed(
            session: self, connection: connection,
            batchSize: properties["batch"].flatMap { Int($0) }.map { min(max($0, 1), Self.maximumBatch) } ?? 200,
            continuous: properties.flag("continuous"), activeOnly: properties.flag("activeOnly"),
            allLeaves: properties["style"] == "all_docs", documentIDs: documentIDs)
        feeds.withLock { feeds in
            let number = feeds.next
            feeds.next += 1
            // Registered under the lock, so that a feed finishing at once finds itself there to leave.
            feeds.running[number] = Task {
                await connection.respond(to: request, with: request.reply())
                await feed.run(since: since)
                _ = self.feeds.withLock { $0.running.removeValue(forKey: number) }
            }
        }
        return nil
    }

    /// A subscription's feed.
    private struct Feed: Sendable {
        let session: ListenerBLIPSession
        let connection: BLIPConnection
        let batchSize: Int
        let continuous: Bool
        let activeOnly: Bool
        /// Every leaf of a conflicted document is offered (`style: all_docs`, what Couchette's replicator asks for),
        /// else its current revision only, as Sync Gateway sends it to a client that keeps no conflicts.
        let allLeaves: Bool
        let documentIDs: Set<String>?

        /// Feeds batches until caught up (one-shot) or the task is cancelled; a batch's `changes` goes out before the
        /// previous ones' revisions are answered (up to ``ListenerBLIPSession/maximumBatchesInFlight``), and the
        /// caught-up `changes []` once the client has answered the last batch, before its revisions (as Sync Gateway's
        /// messages arrive, without its race: ``CaughtUpGate``).
        func run(since start: String?) async {
            var since = start
            var caughtUp = false
            // `activeOnly` spares a client starting from nothing the tombstones of the past; once it has caught up, a
            // deletion is news it must get (as Sync Gateway does).
            var skipsDeletions = activeOnly
            let peer = session.peer
            let slots = BatchSlots(count: ListenerBLIPSession.maximumBatchesInFlight)
            let caughtUpGate = CaughtUpGate()
            // Discarding: a long continuous feed's finished batches do not stay in the group until it ends.
            await withDiscardingTaskGroup { group in
                do {
                    while !Task.isCancelled {
                        let batch = try await peer.changes(since: since, limit: batchSize)
                        guard let last = batch.lastSequence, last != since, !batch.changes.isEmpty else {
                            if !caughtUp {
                                // Now, or once the client has answered every batch (``CaughtUpGate``).
                                try await caughtUpGate.caughtUp(on: connection)
                                caughtUp = true
                                skipsDeletions = false
                            }
                            guard continuous else { break }
                            try await peer.waitForChanges(since: since, timeout: ListenerBLIPSession.idleWait)
                            continue
                        }
                        since = last
                        let changes = batch.changes.filter { included($0, skippingDeletions: skipsDeletions) }
                        guard !changes.isEmpty else { continue }
                        await slots.acquire()
                        let ticket = await caughtUpGate.batchQueued()
                        let number: UInt64
                        do {
                            number = try await offer(changes)
                        } catch {
                            await caughtUpGate.batchFailed(ticket)
                            throw error
                        }
                        group.addTask {
                            do {
                                try await sendRevisions(
                                    of: changes, answering: number, ticket: ticket, caughtUpGate: caughtUpGate)
                            } catch {
                                await connection.close()
                            }
                            await slots.release()
                        }
                    }
                } catch {
                    // The connection closed, or the collection could not be read: the other side sees the socket end.
                    await connection.close()
                }
            }
        }

        private func included(_ change: ReplicationChange, skippingDeletions: Bool) -> Bool {
            if skippingDeletions && change.isDeleted { return false }
            return documentIDs?.contains(change.documentID) ?? true
        }

        /// Queues one `changes` message (`[sequence, docID, revID, deleted?]`: an entry per document, its current
        /// revision, as Sync Gateway offers them, or one per leaf with ``allLeaves``); returns its number.
        private func offer(_ changes: [ReplicationChange]) async throws -> UInt64 {
            try await connection.queue(
                properties: ["Profile": "changes"], body: JSONValue.array(entries(of: changes)).serialized(),
                urgent: true, compressed: true)
        }

        private func entries(of changes: [ReplicationChange]) -> [JSONValue] {
            offered(changes).map { change, revisionID, isFirst in
                var entry: [JSONValue] = [
                    .int(Int64(clamping: change.sequence ?? 0)), .string(change.documentID), .string(revisionID),
                ]
                // The flag tells of the winner (the first); a conflicting leaf's own travels in its `rev`.
                if change.isDeleted && isFirst { entry.append(1) }
                return .array(entry)
            }
        }

        /// The revisions offered for `changes`, in order: each document's current one, and with ``allLeaves`` its
        /// other leaves after it.
        private func offered(_ changes: [ReplicationChange]) -> [(ReplicationChange, String, isFirst: Bool)] {
            changes.flatMap { change in
                (allLeaves ? change.revisionIDs : Array(change.revisionIDs.prefix(1))).enumerated().map {
                    (change, $1, $0 == 0)
                }
            }
        }

        /// Waits for the reply to `changes` message `number`, then sends a `rev` for each revision it asks for (with
        /// the ancestors it names as known), a `norev` for one no longer stored, and waits for their answers.
        private func sendRevisions(
            of changes: [ReplicationChange], answering number: UInt64, ticket: Int, caughtUpGate: CaughtUpGate
        ) async throws {
            // The caught-up `changes []` goes before this batch's revisions when it is the last one it waits for.
            let reply = try await caughtUpGate.answer(to: number, ticket: ticket, on: connection)
            if let error = reply.error { throw BLIPRevisionMessage.error(error) }
            let offered = offered(changes).map { change, revisionID, _ in (change.documentID, revisionID) }
            var sequences: [String: String] = [:]
            for change in changes { sequences[change.documentID] = String(change.sequence ?? 0) }
            let answers = (try? JSONValue(parsing: reply.body).arrayValue) ?? []
            let maximumHistory = reply.properties["maxHistory"].flatMap { Int($0) }.map { max($0, 1) } ?? Int.max
            var wanted: [WantedRevision] = []
            for (index, item) in offered.enumerated() where index < answers.count {
                guard case .array(let known) = answers[index] else { continue }
                wanted.append(
                    WantedRevision(documentID: item.0, revisionID: item.1, knownAncestors: known.compactMap(\.stringValue)))
            }
            guard !wanted.isEmpty else { return }
            var revisions = try await session.peer.revisions(wanted)
            for index in revisions.indices where revisions[index].history.count > maximumHistory + 1 {
                revisions[index].history = Array(revisions[index].history.prefix(maximumHistory + 1))
            }
            let sent = Set(revisions.map { BLIPReplicatorInbox.key($0.documentID, $0.revisionID) })
            for item in wanted where !sent.contains(BLIPReplicatorInbox.key(item.documentID, item.revisionID)) {
                // No longer stored (purged, compacted away): the other side stops waiting for it.
                try await connection.post(properties: [
                    "Profile": "norev", "id": item.documentID, "rev": item.revisionID,
                    "sequence": sequences[item.documentID] ?? "0", "error": "404", "reason": "missing",
                ])
            }
            _ = try await BLIPRevisionMessage.send(
                revisions, sequences: sequences, on: connection, offering: session.offered)
        }
    }

    // MARK: - Taking a push

    /// `changes` from a pushing peer: for each `[sequence, docID, revID, …]`, the revisions of that document held here
    /// that may be its ancestors (`[]` when none: send it), or `0` when the revision is here (`_revs_diff`).
    private func changes(_ request: BLIPMessage) async throws -> BLIPMessage {
        guard case .array(let entries)? = try? JSONValue(parsing: request.body) else {
            throw CouchetteError(.badInput, message: "changes needs a JSON array", status: 400)
        }
        var offered: [String: [String]] = [:]
        for entry in entries {
            guard let id = entry[1]?.stringValue, let revision = entry[2]?.stringValue else { continue }
            offered[id, default: []].append(revision)
        }
        let missing = try await peer.revsDiff(offered)
        return request.reply(
            answers: entries.map { entry in
                guard let id = entry[1]?.stringValue, let revision = entry[2]?.stringValue,
                    let diff = missing[id], diff.missing.contains(revision)
                else { return 0 }
                return .array(diff.possibleAncestors.map(JSONValue.string))
            })
    }

    /// `proposeChanges` (Couchbase Lite 3): for each `[docID, revID, serverRevID?]`, `0` (send it) when the document
    /// is absent or deleted here or its current revision is `serverRevID`, `304` when the revision is here, else
    /// `409`.
    private func proposeChanges(_ request: BLIPMessage) throws -> BLIPMessage {
        guard case .array(let entries)? = try? JSONValue(parsing: request.body) else {
            throw CouchetteError(.badInput, message: "proposeChanges needs a JSON array", status: 400)
        }
        let answers: [JSONValue] = try entries.map { entry in
            guard let id = entry[0]?.stringValue, let revision = entry[1]?.stringValue else { return 400 }
            let known = entry[2]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            if try collection.missingRevisions([id: [revision]])[id] == nil { return 304 }
            guard let current = try collection.document(id: id)?.revisionID else { return 0 }
            return known == current ? 0 : 409
        }
        return request.reply(answers: answers)
    }

    /// `rev`: stores the revision with its history (fetching the attachments not held here); with `noconflicts`,
    /// only when it descends from the document's current revision, else `ERR HTTP/409`. A read-only listener
    /// refuses it with 403.
    private func revision(_ request: BLIPMessage, on connection: BLIPConnection) async throws -> BLIPMessage {
        if readOnly { throw CouchetteError(.forbidden, message: "The listener is read-only") }
        let revision = try await BLIPRevisionMessage.revision(from: request, on: connection, local: local)
        if request.properties.flag("noconflicts"), let current = try collection.document(id: revision.documentID),
            let currentID = current.revisionID, !revision.history.contains(currentID)
        {
            throw CouchetteError(.conflict, message: "Document update conflict")
        }
        if let error = try await peer.store([revision]).first?.error { throw error }
        return request.reply()
    }
}
