import CouchetteCore

// MARK: - ReplicationPeer

/// One side of a replication, local collection or remote database, as the replication protocol sees it
/// (replication-protocol.md §3): changes, revs-diff, revisions with history, bulk insertion of existing revisions
/// and `_local` checkpoints.
protocol ReplicationPeer: Sendable {
    /// Identifies the peer in replication IDs (stable across runs).
    var identity: String { get }

    /// The changes after `since` (nil: from the start), at most `limit` documents.
    func changes(since: String?, limit: Int) async throws -> ReplicationChanges

    /// Which of the given revisions this peer lacks, by document ID, with the revisions it holds that may be their
    /// ancestors; documents lacking nothing are left out.
    func revsDiff(_ revisions: [String: [String]]) async throws -> [String: MissingRevisions]

    /// The given revisions with their history, and the content of the attachments changed since their known
    /// ancestors; revisions no longer stored are left out.
    func revisions(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision]

    /// The revisions wanted of a batch ``changes(since:limit:)`` returned, as ``revisions(_:)`` reads them; a pass
    /// calls it once for each batch, even when nothing of it is wanted (a BLIP source answers the batch's message).
    func revisions(_ wanted: [WantedRevision], of batch: ReplicationChanges) async throws -> [ReplicatedRevision]

    /// Stores revisions made elsewhere (`new_edits=false`), one result each.
    func store(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult]

    /// A checkpoint saved by ``saveCheckpoint(_:id:)``.
    func checkpoint(id: String) async throws -> [String: JSONValue]?

    /// Saves a checkpoint in a `_local` document.
    func saveCheckpoint(_ checkpoint: [String: JSONValue], id: String) async throws

    /// Returns once the peer may have changes after `since`, or after at most `timeout` (continuous replication);
    /// at once when the task is cancelled.
    func waitForChanges(since: String?, timeout: Duration) async throws

    /// Ends what the peer holds open (a WebSocket); called when the replication stops.
    func close() async

    /// How many ``store(_:)`` calls a pass may have under way at once (stored batches are still reported and
    /// checkpointed in order; a batch with attachments waits for those before it): more than one keeps a remote peer
    /// busy while the answers to the last batch travel.
    var concurrentStores: Int { get }
}

extension ReplicationPeer {
    func revisions(_ wanted: [WantedRevision], of batch: ReplicationChanges) async throws -> [ReplicatedRevision] {
        try await revisions(wanted)
    }

    func close() async {}

    var concurrentStores: Int { 1 }
}
