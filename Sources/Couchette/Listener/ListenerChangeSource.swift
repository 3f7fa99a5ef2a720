import CouchetteBLIP
import CouchetteCore
import Synchronization

// MARK: - ListenerChangeSource

/// The changes of a listener's collection a BLIP subscription is sent (``SyncChangeSource``): read from its
/// ``LocalReplicationPeer`` in sequence order, narrowed to the subscription's `docIDs`; each document's current
/// revision, or every leaf when the subscriber asked (`style: all_docs`). Under `activeOnly`, deletions are left out
/// until the subscriber has caught up (then a deletion is news it must get, as Sync Gateway does). A caught-up
/// continuous source waits for the collection's next change, or ``idleWait``.
final class ListenerChangeSource: SyncChangeSource {
    /// How long a caught-up continuous feed waits for a change before looking again.
    static let idleWait: Duration = .seconds(60)

    private let peer: LocalReplicationPeer
    private let batchSize: Int
    private let continuous: Bool
    private let allLeaves: Bool
    private let documentIDs: Set<String>?

    private struct State {
        var since: String?
        var caughtUp = false
        var skipsDeletions: Bool
        var waiter: Task<Void, Never>?
        var stopped = false
    }

    private let state: Mutex<State>

    /// The source of `subscription` over `collection`.
    init(_ subscription: SubChangesRequest, collection: Collection) {
        peer = LocalReplicationPeer(collection: collection, autoPurge: false)
        batchSize = subscription.batchSize
        continuous = subscription.continuous
        allLeaves = subscription.allLeaves
        documentIDs = subscription.documentIDs.map(Set.init)
        state = Mutex(State(since: subscription.since, skipsDeletions: subscription.activeOnly))
    }

    func next() async throws -> SyncFeedStep {
        while true {
            let (since, stopped) = state.withLock { ($0.since, $0.stopped) }
            guard !stopped else { return .finished }
            let batch = try await peer.changes(since: since, limit: batchSize)
            guard let last = batch.lastSequence, last != since, !batch.changes.isEmpty else {
                let firstTime = state.withLock { state in
                    defer {
                        state.caughtUp = true
                        state.skipsDeletions = false
                    }
                    return !state.caughtUp
                }
                // A one-shot feed ends at once: a change written meanwhile is not sent after its `changes []`.
                guard continuous else { return .finished }
                return firstTime ? .caughtUp : .idle
            }
            let skipsDeletions = state.withLock { state in
                state.since = last
                return state.skipsDeletions
            }
            let changes = batch.changes.filter { change in
                !(skipsDeletions && change.isDeleted) && (documentIDs?.contains(change.documentID) ?? true)
            }
            guard !changes.isEmpty else { continue }
            return .changes(SyncChangeBatch(entries: changes.flatMap(entries(of:)), reader: ListenerRevisionReader(peer: peer)))
        }
    }

    func whenChanged(_ wake: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            // Stopped before it could wait: the feed's next step ends it.
            guard !state.stopped else {
                state.waiter = Task { await wake() }
                return
            }
            let since = state.since
            state.waiter = Task { [peer] in
                try? await peer.waitForChanges(since: since, timeout: Self.idleWait)
                await wake()
            }
        }
    }

    func stop() {
        let waiter = state.withLock { state in
            state.stopped = true
            return state.waiter.take()
        }
        waiter?.cancel()
    }

    /// A change's entries: its current revision (flagged when deleted), then its other leaves when every leaf was
    /// asked for (their own deletion travels in their `rev`).
    private func entries(of change: ReplicationChange) -> [OfferedChange] {
        let offered = allLeaves ? change.revisionIDs : Array(change.revisionIDs.prefix(1))
        return offered.enumerated().map { index, revision in
            OfferedChange(
                sequence: .int(Int64(clamping: change.sequence ?? 0)), documentID: change.documentID,
                revisionID: revision, flags: index == 0 && change.isDeleted ? OfferedChange.deleted : 0)
        }
    }
}

// MARK: - ListenerRevisionReader

/// Reads the revisions a listener's subscriber asked for from the collection, with at most `maxHistory` ancestors; a
/// revision no longer stored (purged, compacted away) is a `norev`.
struct ListenerRevisionReader: SyncRevisionReader {
    let peer: LocalReplicationPeer

    func revisions(_ wanted: [WantedChange], maxHistory: Int, deltas: Bool) async throws -> [OutgoingRevision] {
        let read = try await peer.revisions(
            wanted.map {
                WantedRevision(
                    documentID: $0.entry.documentID, revisionID: $0.entry.revisionID,
                    knownAncestors: $0.knownAncestors)
            })
        var byKey: [String: ReplicatedRevision] = [:]
        for revision in read { byKey[BLIPReplicatorInbox.key(revision.documentID, revision.revisionID)] = revision }
        return wanted.map { item in
            guard let revision = byKey[BLIPReplicatorInbox.key(item.entry.documentID, item.entry.revisionID)] else {
                return .missing(item, status: 404, reason: "missing")
            }
            let message = RevisionMessage(
                documentID: revision.documentID, revisionID: revision.revisionID,
                history: Array(revision.history.dropFirst().prefix(maxHistory)), isDeleted: revision.isDeleted,
                sequence: item.entry.sequence.serializedString(), body: JSONValue.object(revision.body).serialized())
            let digests = (revision.body["_attachments"]?.objectValue ?? [:]).values.compactMap {
                $0["digest"]?.stringValue
            }
            return .revision(message, attachmentDigests: digests)
        }
    }
}
