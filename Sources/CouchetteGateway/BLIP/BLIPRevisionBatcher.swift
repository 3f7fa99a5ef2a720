import CouchetteCore
import Synchronization

// MARK: - BLIPRevisionBatcher

/// Stores a push's `rev`s in batches (group commit): a client sends a batch's `rev`s all at once and their handlers
/// run concurrently, so while one write is under way the revisions arriving queue, and the next write takes them all
/// — one transaction and one sync-function call per batch (``AuthorizedDatabase/bulkDocs(_:newEdits:)``, as
/// `_bulk_docs?new_edits=false` stores them) instead of one per revision. Each revision still gets its own result.
final class BLIPRevisionBatcher: Sendable {
    private struct Pending {
        var body: JSONValue
        var target: AuthorizedDatabase
        var noConflicts: Bool
        var continuation: CheckedContinuation<JSONValue, Never>
    }

    private struct State {
        var pending: [Pending] = []
        var writing = false
    }

    private let state = Mutex(State())

    /// The most revisions one write takes.
    static let maximumBatch = 500

    /// Stores `body` (a revision with `_id`, `_rev` and `_revisions`) as `target`'s caller, with the revisions
    /// queued beside it; returns its `_bulk_docs` result (`{"id", "rev"}`, or `{"error", "reason", "status"}`).
    ///
    /// - Parameter noConflicts: The `rev` message's `noconflicts`: a revision that would make a conflict is refused
    ///   (409) by the write itself. Consecutive revisions with the same setting share a write.
    func store(_ body: JSONValue, as target: AuthorizedDatabase, noConflicts: Bool) async -> JSONValue {
        await withCheckedContinuation { continuation in
            let startsWriting = state.withLock { state in
                state.pending.append(
                    Pending(body: body, target: target, noConflicts: noConflicts, continuation: continuation))
                defer { state.writing = true }
                return !state.writing
            }
            if startsWriting { Task { write() } }
        }
    }

    /// Writes what is queued, batch after batch, until nothing is.
    private func write() {
        while true {
            let batch: [Pending] = state.withLock { state in
                guard !state.pending.isEmpty else {
                    state.writing = false
                    return []
                }
                let noConflicts = state.pending[0].noConflicts
                let taken = Array(state.pending.prefix(Self.maximumBatch).prefix { $0.noConflicts == noConflicts })
                state.pending.removeFirst(taken.count)
                return taken
            }
            guard let first = batch.first else { return }
            let results = first.target.bulkDocs(batch.map(\.body), newEdits: false, noConflicts: first.noConflicts)
            for (index, item) in batch.enumerated() {
                item.continuation.resume(
                    returning: index < results.count ? results[index] : ["error": "internal", "status": 500])
            }
        }
    }
}
