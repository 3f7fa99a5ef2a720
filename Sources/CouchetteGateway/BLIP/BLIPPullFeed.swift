import CouchetteBLIP
import CouchetteCore
import Synchronization

// MARK: - BLIPPullFeed

/// The changes a `subChanges` subscription sends (spec: blip-sync-protocol.md §3.3–§3.7): `changes` messages of at
/// most `batch` entries in sequence order, each answered by the client with the revisions it wants, which follow as
/// `rev` messages (`norev` when one cannot be read); `changes []` once caught up; then, when continuous, new changes
/// as they are committed, woken by the database's notifier.
///
/// As Sync Gateway does, the feed does not wait for a batch's reply before going on: each reply is awaited beside it
/// (at most ``maximumBatchesInFlight`` at a time); `changes []` goes out once the client has answered the last batch,
/// before that batch's revisions (``CaughtUpGate``); a `rev` without attachments is sent `NoReply` (the client stores
/// it without answering), others wait for their reply. Posting waits while the connection's outbox is full, so a slow client holds the feed back.
///
/// An idle continuous subscription holds no task: when caught up, the feed registers a wake-up with the notifier
/// (``ChangeNotifier/whenChanged(_:after:deadline:_:)``) and its task ends; a change starts a new one. A thousand
/// idle subscriptions then cost their state and registrations only (`blip.feeds-kb`). ``stop()`` ends it when the
/// connection does.
final class BLIPPullFeed: Sendable {
    /// The database and the caller reading it.
    let target: AuthorizedDatabase
    /// The connection the messages go out on.
    let connection: BLIPConnection
    /// The most entries in one `changes` message.
    let batchSize: Int
    /// Whether the client takes revocation entries (`deleted` 2–4) instead of `_removed` revisions.
    let revocations: Bool
    /// The attachments the client may fetch while their revision awaits its reply.
    let allowance: BLIPAttachmentAllowance
    /// Whether the client takes deltas; consulted only when the database enables delta sync.
    let deltas: BLIPDeltaNegotiation
    /// Whether the subscription goes on once caught up.
    let continuous: Bool
    /// Whether every leaf of a conflicted document is offered (the feed reads `style=all_docs`: the client asked with
    /// `style: all_docs`, as Couchette's replicator does, keeping conflicts as a REST pull does), rather than its
    /// current revision only (what Sync Gateway sends, and what a client keeping no conflicts must get).
    let allLeaves: Bool
    /// Counts what is sent; nil for none.
    let log: BLIPSessionLog?

    /// History sent in a `rev` when the client says nothing (LiteCore asks for 20).
    static let defaultMaxHistory = 20
    /// `changes` messages whose replies are awaited at once (LiteCore keeps 5 while catching up).
    static let maximumBatchesInFlight = 5

    private struct State {
        /// Whether the feed ended (caught up when one-shot, the connection closed, the database went offline).
        var ended = false
    }

    /// The feed between runs, and its registration with the notifier.
    private let parking: ChangesFeedParking
    private let state = Mutex(State())
    private let slots = BatchSlots(count: BLIPPullFeed.maximumBatchesInFlight)
    private let caughtUpGate = CaughtUpGate()

    /// A subscription sending `feed` on `connection`.
    init(
        _ feed: ChangesFeed, continuous: Bool, target: AuthorizedDatabase,
        connection: BLIPConnection, batchSize: Int, revocations: Bool, allowance: BLIPAttachmentAllowance,
        deltas: BLIPDeltaNegotiation, log: BLIPSessionLog? = nil
    ) {
        allLeaves = feed.reader.options.includeAllLeaves
        self.log = log
        self.target = target
        self.connection = connection
        self.batchSize = batchSize
        self.revocations = revocations
        self.allowance = allowance
        self.deltas = deltas
        self.continuous = continuous
        parking = ChangesFeedParking(feed)
    }

    /// Sends the changes there are now, then goes on (continuous) until ``stop()``, the connection closes or the
    /// database goes offline. Returns once the first pass has been handed to the connection.
    func start() async {
        await pump(after: nil)
    }

    /// Ends the subscription: no more changes are sent (a batch under way finishes).
    func stop() {
        parking.stop()
    }

    /// Whether the subscription is over (``stop()``, or its feed ended).
    var isOver: Bool {
        parking.isStopped || state.withLock(\.ended)
    }

    /// Runs the feed from where it stopped (after the wait ending with `outcome`) until it must wait again or ends.
    private func pump(after outcome: ChangeNotifier.WaitOutcome?) async {
        guard var feed = parking.take() else { return }
        if let outcome { _ = feed.resume(after: outcome) }
        var parked = false
        defer { if !parked { state.withLock { $0.ended = true } } }
        do {
            while !parking.isStopped {
                switch try feed.step() {
                case .event(.entries(let rows)):
                    try await send(rows, readingAs: feed.reader.caller)
                case .event(.caughtUp):
                    try await postCaughtUp()
                case .event(.heartbeat):
                    continue
                case .finished:
                    guard continuous else {
                        try await postCaughtUp()
                        return
                    }
                    // A continuous feed ends only when its database closes (offline, flushed, shutdown): the client
                    // is told by the connection's end, and reconnects.
                    await connection.close()
                    return
                case .wait(let sequence, let deadline):
                    parked = true
                    parking.park(feed, after: sequence, deadline: deadline) { [self] in await pump(after: $0) }
                    return
                }
            }
        } catch {
            // The connection closed, or the feed failed to read: the subscription ends, and the connection with it (a
            // one-shot client would otherwise wait for a `[]` that never comes).
            await connection.close()
        }
    }

    /// `changes []`, once: the client is caught up. It goes out once the client has answered every batch before it
    /// (``CaughtUpGate``): now, or from the task of the last batch, before that batch's revisions.
    private func postCaughtUp() async throws {
        try await caughtUpGate.caughtUp(on: connection)
    }

    /// Sends `rows` in `changes` messages of ``batchSize``, each one's revisions sent by a task of its own once the
    /// client answers.
    private func send(_ rows: [ChangesRow], readingAs caller: Caller) async throws {
        // Revisions are read as the feed's caller now: a user granted a channel since the connection opened reads
        // its documents (the feed reloads the user as their access changes).
        let reader = AuthorizedDatabase(database: target.database, caller: caller)
        let rows = rows.filter { !($0.json["id"]?.stringValue?.hasPrefix("_user/") ?? true) }
        let entries = allLeaves ? rows.flatMap(Self.leafEntries) : rows
        for start in stride(from: 0, to: entries.count, by: batchSize) {
            let batch = Array(entries[start..<min(start + batchSize, entries.count)])
            await slots.acquire()
            let ticket = await caughtUpGate.batchQueued()
            let number: UInt64
            do {
                number = try await connection.queue(
                    properties: ["Profile": "changes"], body: JSONValue.array(batch.map(entry)).serialized(),
                    urgent: true, compressed: true)
            } catch {
                await caughtUpGate.batchFailed(ticket)
                await slots.release()
                throw error
            }
            Task {
                await self.sendRevisions(of: batch, answering: number, ticket: ticket, from: reader)
                await self.slots.release()
            }
        }
    }

    /// Waits for the reply to the `changes` message numbered `number` and sends the revisions it wants.
    private func sendRevisions(
        of rows: [ChangesRow], answering number: UInt64, ticket: Int, from reader: AuthorizedDatabase
    ) async {
        do {
            let reply = try await caughtUpGate.answer(to: number, ticket: ticket, on: connection)
            guard reply.type == .response else { return }
            await deltas.noteReply(deltas: reply.properties["deltas"])
            let maxHistory = reply.properties["maxHistory"].flatMap { Int($0) }.map { max($0, 1) } ?? Self.defaultMaxHistory
            let answers = (try? JSONValue(parsing: reply.body).arrayValue) ?? []
            let wanted = zip(rows, answers).compactMap { row, answer -> (ChangesRow, [String])? in
                guard case .array(let known) = answer else { return nil }
                return (row, known.compactMap(\.stringValue))
            }
            // The wanted documents in one read (one transaction), as a REST pull's `_bulk_get` reads them.
            let snapshots = try? reader.snapshots(ids: wanted.compactMap { $0.0.json["id"]?.stringValue })
            for (row, known) in wanted {
                try await sendRevision(of: row, known: known, maxHistory: maxHistory, from: reader, in: snapshots)
            }
            log?.notePulled(wanted.count)
        } catch {
            // The connection closed.
        }
    }

    /// One row per leaf revision of a conflicted document (a `style=all_docs` row lists them all), for a client that
    /// asked for every leaf (``allLeaves``): one holding a branch is offered the others, as a REST pull is; a
    /// revocation row stays one.
    private static func leafEntries(_ row: ChangesRow) -> [ChangesRow] {
        guard case .array(let leaves)? = row.json["changes"], leaves.count > 1, case .object(var json) = row.json else {
            return [row]
        }
        return leaves.enumerated().map { index, leaf in
            json["changes"] = [leaf]
            // The row's `deleted` tells of the winner (the first); a conflicting leaf's own flag travels in its `rev`.
            if index > 0 { json["deleted"] = nil }
            return ChangesRow(sequence: row.sequence, json: .object(json))
        }
    }

    /// A `changes` entry: `[sequence, docID, revID]`, then `deleted` (1 tombstone, 2 revoked, 3 revoked tombstone)
    /// when set.
    private func entry(_ row: ChangesRow) -> JSONValue {
        var items: [JSONValue] = [
            Self.sequenceValue(row.sequence), row.json["id"] ?? "", row.json["changes"]?[0]?["rev"] ?? "",
        ]
        let deleted = row.json["deleted"] == true
        if revocations, row.json["revoked"] == true {
            items.append(.int(deleted ? 3 : 2))
        } else if deleted {
            items.append(1)
        }
        return .array(items)
    }

    /// A `rev` for a wanted entry, or a `norev` when the revision cannot be read; waits for the client's reply.
    private func sendRevision(
        of row: ChangesRow, known: [String], maxHistory: Int, from reader: AuthorizedDatabase,
        in snapshots: [String: StoredDocument]?
    ) async throws {
        let id = row.json["id"]?.stringValue ?? ""
        let revisionText = row.json["changes"]?[0]?["rev"]?.stringValue ?? ""
        let sequence = Self.sequenceValue(row.sequence).serializedString()
        // The stored body as it is when no delta can replace it and no attachment needs allowing, else the revision.
        let stored: (text: [UInt8], history: [RevisionID])?
        let revision: DocumentRevision?
        var history: [RevisionID]?
        do throws(GatewayError) {
            let revisionID = try DocumentValidation.parseRevision(revisionText)
            let knownIDs = Set(known.compactMap { try? RevisionID(parsing: $0) })
            let options = ReadOptions(
                includeRevisions: true, revisionsLimit: maxHistory + 1,
                revisionsFrom: knownIDs.isEmpty ? nil : knownIDs)
            stored =
                target.database.config.deltaSync
                ? nil
                : reader.storedText(id: id, revision: revisionID, options: options, in: snapshots)
                    .flatMap { DocumentStore.mayHaveAttachments($0.text) ? nil : $0 }
            revision =
                stored == nil ? try reader.revision(id: id, revision: revisionID, options: options, in: snapshots) : nil
            if stored == nil {
                history = reader.sentHistory(id: id, revision: revisionID, options: options, in: snapshots)
            }
        } catch {
            try await connection.post(properties: [
                "Profile": "norev", "id": id, "rev": revisionText, "sequence": sequence,
                "error": String(error.statusCode), "reason": error.reason,
            ])
            return
        }
        var properties: BLIPProperties = ["Profile": "rev", "id": id, "rev": revisionText, "sequence": sequence]
        if let (text, history) = stored {
            if history.count > 1 {
                properties["history"] = history.dropFirst().map(\.description).joined(separator: ",")
            }
            try await connection.post(properties: properties, body: text, compressed: true)
            return
        }
        guard let revision, let body = BLIPRevisionBody.properties(of: revision.body) else { return }
        if revision.body["_deleted"] == true { properties["deleted"] = "1" }
        let ancestors =
            (history ?? (try? RevisionHistory(json: revision.body["_revisions"] ?? .null))?.revisionIDs ?? []).dropFirst()
        if !ancestors.isEmpty { properties["history"] = ancestors.map(\.description).joined(separator: ",") }
        var bytes = JSONValue.object(body).serialized()
        if let (source, delta) = await delta(
            of: .object(body), id: id, known: known, fullSize: bytes.count, from: reader)
        {
            properties["deltaSrc"] = source
            bytes = delta
        }
        guard case .object(let attachments)? = body["_attachments"], !attachments.isEmpty else {
            try await connection.post(properties: properties, body: bytes, compressed: true)
            return
        }
        // The client fetches the attachments it lacks (getAttachment) before it answers.
        let digests = attachments.values.compactMap { $0["digest"]?.stringValue }
        await allowance.allow(digests, of: id)
        do {
            _ = try await connection.send(properties: properties, body: bytes, compressed: true)
        } catch {
            await allowance.revoke(digests, of: id)
            throw error
        }
        await allowance.revoke(digests, of: id)
    }

    /// The body as a delta against the first revision the client knows whose body is still here, when the database
    /// enables delta sync, the client takes deltas and the delta is smaller than the body (§4.1).
    private func delta(
        of body: JSONValue, id: String, known: [String], fullSize: Int, from reader: AuthorizedDatabase
    ) async -> (String, [UInt8])? {
        guard target.database.config.deltaSync, !known.isEmpty, await deltas.clientAcceptsDeltas else { return nil }
        for source in known {
            guard let sourceID = try? RevisionID(parsing: source),
                let sourceRevision = try? reader.revision(id: id, revision: sourceID),
                sourceRevision.body["_removed"] == nil,
                let sourceBody = BLIPRevisionBody.properties(of: sourceRevision.body)
            else { continue }
            let delta = JSONDelta.make(from: .object(sourceBody), to: body) ?? .object([:])
            let bytes = delta.serialized()
            return bytes.count < fullSize ? (source, bytes) : nil
        }
        return nil
    }

    /// A sequence as the protocol writes it: a number, or `"N:S"` for a backfilled entry.
    static func sequenceValue(_ sequence: ChangeSequence) -> JSONValue {
        sequence.isBackfill ? .string(sequence.description) : .int(Int64(clamping: sequence.sequence))
    }
}
