import CouchetteCore
import Crypto

// MARK: - ReplicationPass

/// One direction of a replication, source to target, until the source has no more changes (replication-protocol.md
/// §3): read the checkpoint, then per batch of changes `revs_diff` on the target, fetch what it lacks with history,
/// store it there as existing revisions, and save the checkpoint on both sides.
///
/// A checkpoint is used only when both sides hold the same one; otherwise the pass starts over, which `revs_diff`
/// makes cheap. Refused revisions (a target's sync function saying 403) are reported and do not stop the pass.
struct ReplicationPass: Sendable {
    let source: any ReplicationPeer
    let target: any ReplicationPeer
    /// Only these documents (nil: all).
    let documentIDs: Set<String>?
    let batchSize: Int
    /// The replicator's own collection (source of a push, target of a pull).
    let localCollection: Collection
    /// Whether the source is the local collection.
    var isPush = false
    /// Only revisions it accepts are stored on the target (push and pull filters).
    var filter: (@Sendable (ReplicatedRevision) -> Bool)? = nil

    /// What one batch did.
    struct BatchReport: Sendable {
        var examined: Int
        var written: [ReplicationWriteResult]
    }

    /// Names the pass's checkpoints: a digest of both peers and the filter, stable across runs.
    var replicationID: String {
        Self.replicationID(source: source.identity, target: target.identity, documentIDs: documentIDs)
    }

    /// The replication ID of a pass between peers of these identities.
    static func replicationID(source: String, target: String, documentIDs: Set<String>?) -> String {
        let key = "\(source)\u{1F}\(target)\u{1F}\((documentIDs ?? []).sorted().joined(separator: ","))"
        return Insecure.SHA1.hash(data: Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// How often checkpoints are saved while a pass runs (and always at its end).
    static let checkpointInterval: Duration = .seconds(2)

    /// A batch read from the source, ready to store on the target.
    private struct ReadBatch: Sendable {
        var examined: Int
        var revisions: [ReplicatedRevision]
        var lastSequence: String
    }

    /// Runs until the source has nothing more, calling `report` after each batch.
    ///
    /// Several batches are in flight: while the target stores one (two, for a remote target:
    /// ``ReplicationPeer/concurrentStores``), the revisions of the next are read (`revs_diff`, then the source's
    /// revisions) and the changes after it are listed, so both peers work at once. Batches are reported and
    /// checkpointed in order whatever order their stores finish in; checkpoints are saved after a stored batch every
    /// ``checkpointInterval``, at the end, and when the pass fails, so a checkpoint never passes an unstored change
    /// and a retry resumes after the stored ones.
    ///
    /// - Parameter reset: Ignore the saved checkpoints and start from the beginning.
    /// - Returns: The source's sequence the pass caught up to.
    @discardableResult
    func run(reset: Bool, report: (BatchReport) -> Void) async throws -> String? {
        let checkpointID = replicationID
        var since: String? = nil
        if !reset {
            let sourceCheckpoint = try await source.checkpoint(id: checkpointID)
            let targetCheckpoint = try await target.checkpoint(id: checkpointID)
            if let sourceCheckpoint, sourceCheckpoint == targetCheckpoint {
                since = sourceCheckpoint["lastSequence"]?.stringValue
            }
        }
        let clock = ContinuousClock()
        var lastCheckpoint = clock.now
        var stored = since
        var saved = since
        /// Notes that `stored` is stored on the target, and saves it as the checkpoint when due (or `force`).
        func checkpoint(stored newlyStored: String?, force: Bool) async throws {
            if let newlyStored { stored = newlyStored }
            guard let stored, stored != saved, force || clock.now - lastCheckpoint >= Self.checkpointInterval else {
                return
            }
            let checkpoint: [String: JSONValue] = ["lastSequence": .string(stored)]
            try await target.saveCheckpoint(checkpoint, id: checkpointID)
            try await source.saveCheckpoint(checkpoint, id: checkpointID)
            saved = stored
            lastCheckpoint = clock.now
        }
        do {
            try await transfer(since: &since, report: report, stored: checkpoint(stored:force:))
        } catch {
            // What was stored before a failure (a cut connection, a 5xx) is kept, so a retry goes on from there.
            if !(error is CancellationError) { try? await checkpoint(stored: nil, force: true) }
            throw error
        }
        try await checkpoint(stored: nil, force: true)
        return since
    }

    /// Moves batches after `since` until the source has none, several in flight; calls `stored` with the last
    /// sequence of each batch the target has stored, in order.
    private func transfer(
        since: inout String?, report: (BatchReport) -> Void, stored: (String, Bool) async throws -> Void
    ) async throws {
        let concurrentStores = max(target.concurrentStores, 1)
        try await withThrowingTaskGroup(of: (Int, ReadBatch, [ReplicationWriteResult]).self) { group in
            // Stores finish in any order; they are reported and checkpointed in the order of their batches.
            var submitted = 0
            var finished = 0
            var done: [Int: (ReadBatch, [ReplicationWriteResult])] = [:]
            func finishOldest() async throws {
                guard finished < submitted else { return }
                while done[finished] == nil {
                    let next: (Int, ReadBatch, [ReplicationWriteResult])?
                    do {
                        next = try await group.next()
                    } catch {
                        // An earlier batch failed: later ones already stored are still reported (their documents'
                        // events), though not checkpointed.
                        for index in done.keys.sorted() {
                            if let (batch, written) = done[index] {
                                report(BatchReport(examined: batch.examined, written: written))
                            }
                        }
                        done = [:]
                        throw error
                    }
                    guard let (index, batch, written) = next else {
                        finished = submitted  // no store left (cannot happen while one is under way)
                        return
                    }
                    done[index] = (batch, written)
                }
                guard let (batch, written) = done.removeValue(forKey: finished) else { return }
                finished += 1
                report(BatchReport(examined: batch.examined, written: written))
                try await stored(batch.lastSequence, false)
            }
            var changes = try await source.changes(since: since, limit: batchSize)
            while !changes.changes.isEmpty, let next = changes.lastSequence, next != since {
                try Task.checkCancellation()
                since = next
                // The next batch of changes is listed while this one's revisions are read.
                async let following = source.changes(since: next, limit: batchSize)
                var selected = changes
                selected.changes = changes.changes.filter { documentIDs?.contains($0.documentID) ?? true }
                let batch = ReadBatch(
                    examined: changes.changes.count, revisions: try await missingRevisions(of: selected),
                    lastSequence: next)
                // A batch with attachments waits for the stores before it: what they sent is then known, and a
                // peer sends each attachment's content once per session (the rest go as stubs).
                let limit = batch.revisions.contains { $0.body["_attachments"] != nil } ? 1 : concurrentStores
                while submitted - finished >= limit { try await finishOldest() }
                let target = self.target
                let index = submitted
                group.addTask { (index, batch, try await target.store(batch.revisions)) }
                submitted += 1
                changes = try await following
            }
            while finished < submitted { try await finishOldest() }
        }
    }

    /// The revisions of `changes` the target lacks, read from the source (those the filter refuses left out). The
    /// source is asked once per batch even when nothing is wanted: a BLIP source answers its `changes` message then.
    private func missingRevisions(of batch: ReplicationChanges) async throws -> [ReplicatedRevision] {
        let allChanges = batch.changes
        // Revoked documents need no revision: their stand-ins go straight to the target (which purges them).
        var revoked = allChanges.filter(\.isRevoked).compactMap { change in
            change.revisionIDs.first.map { ReplicatedRevision.accessRemoval(of: change.documentID, revisionID: $0) }
        }
        if let filter { revoked = revoked.filter(filter) }
        let changes = allChanges.filter { !$0.isRevoked }
        var wanted: [WantedRevision] = []
        if !changes.isEmpty {
            var offered: [String: [String]] = [:]
            for change in changes { offered[change.documentID, default: []] += change.revisionIDs }
            let missing = try await target.revsDiff(offered)
            for change in changes {
                guard let diff = missing[change.documentID] else { continue }
                for revision in diff.missing {
                    wanted.append(WantedRevision(
                        documentID: change.documentID, revisionID: revision, knownAncestors: diff.possibleAncestors))
                }
            }
        }
        var revisions = try await source.revisions(wanted, of: batch)
        if let filter { revisions = revisions.filter(filter) }
        return revoked + revisions
    }
}
