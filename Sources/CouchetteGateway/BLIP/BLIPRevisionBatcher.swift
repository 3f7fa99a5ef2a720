import CouchetteCore
import Synchronization

// MARK: - BLIPRevisionBatcher

/// Stores a push's `rev`s in batches (group commit): one transaction and one sync-function call per batch
/// (``AuthorizedDatabase/bulkDocs(_:newEdits:)``, as `_bulk_docs?new_edits=false` stores them) instead of one per
/// revision. Each revision still gets its own result.
///
/// A client sends the `rev`s of a batch one after another, as fast as it reads and encodes them: more slowly than a
/// write takes them here, so taking whatever is queued would write them one or two at a time. The batcher knows how
/// which are coming: the reply to the client's `proposeChanges` or `changes` asked for them (``expect(_:)``). Queued
/// revisions wait until every one asked for by such a reply has arrived (stored, or settled otherwise:
/// ``settle(_:)``, a `norev`), or until a write would be full; what is queued waits no longer than ``stallTimeout``
/// after the last `rev` arrived.
final class BLIPRevisionBatcher: Sendable {
    private struct Pending {
        var body: JSONValue
        var history: [RevisionID]
        var target: AuthorizedDatabase
        var noConflicts: Bool
        var continuation: CheckedContinuation<JSONValue, Never>
    }

    private struct State {
        var pending: [Pending] = []
        var writing = false
        /// The revisions still to arrive of each batch the client was asked for (``BLIPRevisionBatcher/key(_:_:)``),
        /// oldest first: a revision that never comes leaves its own batch waiting, not the later ones.
        var awaited: [Set<String>] = []
        /// Set when a batch asked for has all arrived: what is queued is then written even while a later batch is
        /// arriving.
        var batchArrived = false
        /// Set when no revision arrived for a ``stallTimeout``: what is queued is written, and the batches asked for
        /// are still counted (a client busy elsewhere sends the rest later; forgetting them wrote every later revision
        /// alone).
        var flushing = false
        /// Revisions arrived so far (the stall watch compares it between its ticks).
        var arrivals = 0
        var watchingForStall = false
        var writes = 0

        /// Whether a write should take what is queued now.
        var isReady: Bool {
            !pending.isEmpty
                && (awaited.isEmpty || batchArrived || flushing || pending.count >= BLIPRevisionBatcher.maximumBatch)
        }

        /// Counts revision `key` as arrived, in the oldest batch awaiting it (a revision asked for by none counts for
        /// none).
        mutating func noteArrival(_ key: String) {
            arrivals += 1
            guard let index = awaited.firstIndex(where: { $0.contains(key) }) else { return }
            awaited[index].remove(key)
            if awaited[index].isEmpty {
                awaited.remove(at: index)
                batchArrived = true
            }
        }

        /// Whether the caller is to start writing: a write is due and none is under way (which would take it).
        mutating func claimWriting() -> Bool {
            guard isReady, !writing else { return false }
            writing = true
            return true
        }
    }

    private let state = Mutex(State())

    /// The most revisions one write takes.
    static let maximumBatch = 500

    /// How long queued revisions wait for the rest of their batch without another revision arriving before they
    /// are written anyway (the client did not send all it was asked for).
    let stallTimeout: Duration
    /// Where the writes run: the database's ``GatewayDatabase/executor``.
    let executor: StorageThreads?

    /// - Parameters:
    ///   - stallTimeout: See ``stallTimeout``.
    ///   - executor: See ``executor``.
    init(stallTimeout: Duration = .milliseconds(5), executor: StorageThreads? = nil) {
        self.stallTimeout = stallTimeout
        self.executor = executor
    }

    /// How many writes stored the revisions so far.
    var writeCount: Int { state.withLock { $0.writes } }

    /// How many batches asked for are still arriving.
    var awaitedBatchCount: Int { state.withLock { $0.awaited.count } }

    /// The most batches awaited at once: a client proposing without sending (or faster than it sends) makes the
    /// oldest be forgotten rather than the list grow (LiteCore keeps at most 4 `changes` messages in flight).
    static let maximumAwaitedBatches = 16

    /// How a revision is named among those awaited.
    static func key(_ documentID: String, _ revisionID: String) -> String { documentID + "\u{0}" + revisionID }

    /// The client was asked for these revisions (``key(_:_:)``; the reply to its `proposeChanges` or `changes`, before
    /// it is sent).
    func expect(_ keys: [String]) {
        guard !keys.isEmpty else { return }
        state.withLock { state in
            if state.awaited.count >= Self.maximumAwaitedBatches { state.awaited.removeFirst() }
            state.awaited.append(Set(keys))
        }
    }

    /// Revision `key` arrived and will not be stored through ``store(_:key:history:as:noConflicts:)`` (refused
    /// before, stored alone, or a `norev`); nil for a message naming none.
    func settle(_ key: String?) {
        let startsWriting = state.withLock { state in
            state.noteArrival(key ?? "")
            return state.claimWriting()
        }
        if startsWriting { Task(executorPreference: executor) { await self.write() } }
    }

    /// Stores `body` (a revision with `_id` and `_rev`, named `key` among those awaited) with its ancestry `history` (newest first, starting with the
    /// revision) as `target`'s caller, with the revisions queued beside it; returns its `_bulk_docs` result (`{"id",
    /// "rev"}`, or `{"error", "reason", "status"}`).
    ///
    /// - Parameter noConflicts: The `rev` message's `noconflicts`: a revision that would make a conflict is refused
    ///   (409) by the write itself. Consecutive revisions with the same setting share a write.
    func store(
        _ body: JSONValue, key: String, history: [RevisionID] = [], as target: AuthorizedDatabase, noConflicts: Bool
    ) async -> JSONValue {
        await withCheckedContinuation { continuation in
            let (startsWriting, watches) = state.withLock { state in
                state.pending.append(
                    Pending(
                        body: body, history: history, target: target, noConflicts: noConflicts,
                        continuation: continuation))
                state.noteArrival(key)
                let startsWriting = state.claimWriting()
                let watches = !state.isReady && !state.watchingForStall
                if watches { state.watchingForStall = true }
                return (startsWriting, watches)
            }
            if startsWriting { Task(executorPreference: executor) { await self.write() } }
            if watches { Task(executorPreference: executor) { await self.watchForStall() } }
        }
    }

    /// Writes what is due, batch after batch, until nothing is.
    private func write() async {
        while true {
            let batch: [Pending] = state.withLock { state in
                guard state.isReady else {
                    state.writing = false
                    return []
                }
                let noConflicts = state.pending[0].noConflicts
                let taken = Array(state.pending.prefix(Self.maximumBatch).prefix { $0.noConflicts == noConflicts })
                state.pending.removeFirst(taken.count)
                if state.pending.isEmpty {
                    state.batchArrived = false
                    state.flushing = false
                }
                state.writes += 1
                return taken
            }
            guard let first = batch.first else { return }
            let results = await first.target.bulkDocs(
                batch.map(\.body), newEdits: false, noConflicts: first.noConflicts, histories: batch.map(\.history))
            for (index, item) in batch.enumerated() {
                item.continuation.resume(
                    returning: index < results.count ? results[index] : ["error": "internal", "status": 500])
            }
        }
    }

    /// While revisions are queued and not due, checks every ``stallTimeout`` that more arrived since; when none did,
    /// writes what is queued (the batches asked for are still awaited: a client busy elsewhere sends the rest later,
    /// and a revision that never comes holds back only its own batch's last write).
    private func watchForStall() async {
        var seen = -1
        while true {
            try? await Task.sleep(for: stallTimeout)
            // nil: stop watching; false: still arriving, watch on; true: gave up waiting, write.
            let writes: Bool? = state.withLock { state in
                guard !state.pending.isEmpty, !state.isReady else {
                    state.watchingForStall = false
                    return nil
                }
                guard state.arrivals == seen else {
                    seen = state.arrivals
                    return false
                }
                state.flushing = true
                state.watchingForStall = false
                return state.claimWriting() ? true : nil
            }
            switch writes {
            case false?: continue
            case true?: await write()
            case nil: break
            }
            return
        }
    }
}
