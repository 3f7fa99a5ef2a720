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
        let key = "\(source.identity)\u{1F}\(target.identity)\u{1F}\((documentIDs ?? []).sorted().joined(separator: ","))"
        return Insecure.SHA1.hash(data: Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Runs until the source has nothing more, calling `report` after each batch.
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
        while true {
            try Task.checkCancellation()
            let batch = try await source.changes(since: since, limit: batchSize)
            guard !batch.changes.isEmpty else { break }
            let changes = batch.changes.filter { documentIDs?.contains($0.documentID) ?? true }
            let written = try await transfer(changes)
            report(BatchReport(examined: batch.changes.count, written: written))
            guard let next = batch.lastSequence, next != since else { break }
            since = next
            let checkpoint: [String: JSONValue] = ["lastSequence": .string(next)]
            try await target.saveCheckpoint(checkpoint, id: checkpointID)
            try await source.saveCheckpoint(checkpoint, id: checkpointID)
        }
        return since
    }

    /// Sends the revisions of `changes` the target lacks.
    private func transfer(_ changes: [ReplicationChange]) async throws -> [ReplicationWriteResult] {
        guard !changes.isEmpty else { return [] }
        var offered: [String: [String]] = [:]
        for change in changes { offered[change.documentID, default: []] += change.revisionIDs }
        let missing = try await target.revsDiff(offered)
        guard !missing.isEmpty else { return [] }
        var wanted: [(documentID: String, revisionID: String)] = []
        for change in changes {
            for revision in missing[change.documentID] ?? [] { wanted.append((change.documentID, revision)) }
        }
        var revisions = try await source.revisions(wanted)
        if let filter { revisions = revisions.filter(filter) }
        return try await target.store(revisions)
    }
}
