import CouchetteCore
import Synchronization

// MARK: - SyncPullFeed

/// The changes a `subChanges` subscription sends (spec: blip-sync-protocol.md §3.3–§3.7), from its store's
/// ``SyncChangeSource``: `changes` messages of at most `batch` entries in sequence order, each answered by the client
/// with the revisions it wants, which follow as `rev` messages (`norev` when one cannot be read); `changes []` once
/// caught up; then, when continuous, new changes as they come.
///
/// As Sync Gateway does, the feed does not wait for a batch's reply before going on: each reply is awaited beside it
/// (at most ``maximumBatchesInFlight`` at a time); `changes []` goes out once the client has answered the last batch,
/// before that batch's revisions (``CaughtUpGate``); a `rev` without attachments is sent `NoReply` (the client stores
/// it without answering), others wait for their reply while the client may fetch their attachments. Posting waits
/// while the connection's outbox is full, so a slow client holds the feed back.
///
/// An idle continuous subscription holds no task when its source can wait without one (the gateway's registers with
/// its database's notifier): the feed's task ends at ``SyncFeedStep/idle`` and a change starts a new one. ``stop()``
/// ends it when the connection does.
final class SyncPullFeed: Sendable {
    /// Where the changes come from.
    let source: any SyncChangeSource
    /// The most entries in one `changes` message.
    let batchSize: Int
    /// Whether the subscription goes on once caught up.
    let continuous: Bool
    /// The session (its attachment allowance, delta negotiation, observer).
    let session: PassiveSyncSession
    /// The connection the messages go out on.
    let connection: BLIPConnection

    /// History sent in a `rev` when the client says nothing (LiteCore asks for 20).
    static let defaultMaxHistory = 20
    /// `changes` messages whose replies are awaited at once (LiteCore keeps 5 while catching up).
    static let maximumBatchesInFlight = 5

    /// Whether ``stop()`` was called, and whether the feed ended (caught up when one-shot, the connection closed, the
    /// source finished).
    private let flags = Mutex((stopped: false, ended: false))
    private let slots = BatchSlots(count: SyncPullFeed.maximumBatchesInFlight)
    private let caughtUpGate = CaughtUpGate()

    /// A subscription sending `source` on `connection`.
    init(
        _ source: any SyncChangeSource, subscription: SubChangesRequest, session: PassiveSyncSession,
        connection: BLIPConnection
    ) {
        self.source = source
        batchSize = subscription.batchSize
        continuous = subscription.continuous
        self.session = session
        self.connection = connection
    }

    /// Sends the changes there are now, then goes on (continuous) until ``stop()``, the connection closes or the
    /// source finishes. Returns once the first pass has been handed to the connection.
    func start() async {
        await pump()
    }

    /// Ends the subscription: no more changes are sent (a batch under way finishes).
    func stop() {
        flags.withLock { $0.stopped = true }
        source.stop()
    }

    /// Whether the subscription is over (``stop()``, or its feed ended).
    var isOver: Bool {
        flags.withLock { $0.stopped || $0.ended }
    }

    /// Runs the source from where it stopped until it must wait again or ends.
    private func pump() async {
        var waiting = false
        defer { if !waiting { flags.withLock { $0.ended = true } } }
        do {
            while !flags.withLock({ $0.stopped }) {
                switch try await source.next() {
                case .changes(let batch):
                    try await send(batch)
                case .caughtUp:
                    try await caughtUpGate.caughtUp(on: connection)
                case .finished:
                    guard continuous else {
                        try await caughtUpGate.caughtUp(on: connection)
                        return
                    }
                    // A continuous feed ends only when its database closes (offline, flushed, shutdown): the client
                    // is told by the connection's end, and reconnects.
                    await connection.close()
                    return
                case .idle:
                    waiting = true
                    source.whenChanged { [self] in await pump() }
                    return
                }
            }
        } catch {
            // The connection closed, or the source failed to read: the subscription ends, and the connection with it
            // (a one-shot client would otherwise wait for a `[]` that never comes).
            await connection.close()
        }
    }

    /// Sends the batch's entries in `changes` messages of the subscription's size, each one's revisions sent by a
    /// task of its own once the client answers.
    private func send(_ batch: SyncChangeBatch) async throws {
        let entries = batch.entries
        for start in stride(from: 0, to: entries.count, by: batchSize) {
            let chunk = Array(entries[start..<min(start + batchSize, entries.count)])
            await slots.acquire()
            let ticket = await caughtUpGate.batchQueued()
            let number: UInt64
            do {
                number = try await connection.queue(
                    properties: ["Profile": "changes"], body: OfferedChange.body(of: chunk), urgent: true, compressed: true)
            } catch {
                await caughtUpGate.batchFailed(ticket)
                await slots.release()
                throw error
            }
            Task(executorPreference: session.store.executor) {
                await self.sendRevisions(of: chunk, answering: number, ticket: ticket, from: batch.reader)
                await self.slots.release()
            }
        }
    }

    /// Waits for the reply to the `changes` message numbered `number` and sends the revisions it wants.
    private func sendRevisions(
        of entries: [OfferedChange], answering number: UInt64, ticket: Int, from reader: any SyncRevisionReader
    ) async {
        do {
            let reply = try await caughtUpGate.answer(to: number, ticket: ticket, on: connection)
            guard reply.type == .response else { return }
            await session.deltas.noteReply(deltas: reply.properties["deltas"])
            let maxHistory =
                reply.properties["maxHistory"].flatMap { Int($0) }.map { max($0, 1) } ?? Self.defaultMaxHistory
            let answers = RevsDiffAnswer.answers(in: reply.body, count: entries.count)
            let wanted = zip(entries, answers).compactMap { entry, answer -> WantedChange? in
                guard case .wanted(let known) = answer else { return nil }
                return WantedChange(entry: entry, knownAncestors: known)
            }
            guard !wanted.isEmpty else { return }
            let revisions = try await reader.revisions(
                wanted, maxHistory: maxHistory, deltas: await session.deltas.clientAcceptsDeltas)
            try await send(revisions)
            session.observer?.notePulled(wanted.count)
        } catch {
            // The connection closed, or the store could not be read: the client sees the connection end.
            await connection.close()
        }
    }

    /// Sends a batch's answers: a `norev` or a `rev` without attachments posted without reply, the `rev`s with
    /// attachments queued together and their replies awaited, the client fetching their attachments meanwhile (it may
    /// until it answers).
    private func send(_ revisions: [OutgoingRevision]) async throws {
        let allowance = session.allowance
        var awaiting: [(number: UInt64, documentID: String, digests: [String])] = []
        var answered = 0
        do {
            for revision in revisions {
                switch revision {
                case .missing(let wanted, let status, let reason):
                    try await connection.post(
                        properties: RevisionMessage.missing(
                            documentID: wanted.entry.documentID, revisionID: wanted.entry.revisionID,
                            sequence: wanted.entry.sequence.serializedString(), status: status, reason: reason))
                case .revision(let message, let digests) where digests.isEmpty:
                    try await connection.post(properties: message.properties, body: message.body, compressed: true)
                case .revision(let message, let digests):
                    await allowance.allow(digests, of: message.documentID)
                    awaiting.append((0, message.documentID, digests))
                    awaiting[awaiting.count - 1].number = try await connection.queue(
                        properties: message.properties, body: message.body, compressed: true)
                }
            }
            for item in awaiting {
                _ = try await connection.response(to: item.number)
                await allowance.revoke(item.digests, of: item.documentID)
                answered += 1
            }
        } catch {
            for item in awaiting[answered...] { await allowance.revoke(item.digests, of: item.documentID) }
            throw error
        }
    }
}
