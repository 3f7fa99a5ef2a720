import Foundation
import Synchronization

// MARK: - ReplicatorState

/// A replicator's mutable state: the activity of each pass, progress, the error that stopped it, refused documents,
/// and the listeners told of every change of status.
final class ReplicatorState: Sendable {
    private struct Contents {
        var passActivities: [Int: Replicator.ActivityLevel] = [:]
        var overall = Replicator.ActivityLevel.stopped
        var completed: UInt64 = 0
        var total: UInt64 = 0
        var error: CouchetteError?
        var rejected: [ReplicatedDocument] = []
    }

    private let contents = Mutex(Contents())
    /// Told of every new status.
    let statusListeners = ListenerRegistry<Replicator.Status>()
    /// Told of the documents of every batch.
    let documentListeners = ListenerRegistry<DocumentBatch>()

    /// The documents one batch moved in one direction (``DocumentReplication`` without its replicator).
    struct DocumentBatch: Sendable {
        var isPush: Bool
        var documents: [ReplicatedDocument]
    }

    var status: Replicator.Status {
        contents.withLock { Self.status(of: $0) }
    }

    var rejected: [ReplicatedDocument] { contents.withLock { $0.rejected } }

    /// Starts a run: no pass yet, no progress, no error.
    func begin() {
        update { contents in
            contents.passActivities = [:]
            contents.overall = .connecting
            contents.completed = 0
            contents.total = 0
            contents.error = nil
            contents.rejected = []
        }
    }

    /// Records what one pass is doing; the overall activity is the busiest of them.
    func set(_ activity: Replicator.ActivityLevel, pass: Int) {
        update { contents in
            contents.passActivities[pass] = activity
            let activities = contents.passActivities.values
            contents.overall =
                activities.contains(.busy)
                ? .busy : activities.contains(.connecting) ? .connecting : activities.contains(.offline) ? .offline : .idle
        }
    }

    /// Records a batch of `pass` and tells the document listeners.
    func record(_ report: ReplicationPass.BatchReport, of pass: ReplicationPass) {
        let collection = pass.localCollection
        let documents = report.written.map { result in
            ReplicatedDocument(
                id: result.documentID, scope: collection.scope.name, collection: collection.name,
                flags: DocumentFlags(deleted: result.isDeleted, accessRemoved: result.isAccessRemoval), error: result.error)
        }
        update { contents in
            contents.completed += UInt64(report.examined)
            contents.total += UInt64(report.examined)
            contents.rejected += documents.filter { $0.error != nil }
        }
        guard !documents.isEmpty else { return }
        documentListeners.notify(DocumentBatch(isPush: pass.isPush, documents: documents))
    }

    /// Ends a run, with the error that stopped it if any.
    func end(error: CouchetteError?) {
        update { contents in
            contents.overall = .stopped
            contents.error = error
        }
    }

    // MARK: - Private

    private func update(_ change: (inout Contents) -> Void) {
        let status = contents.withLock { contents in
            change(&contents)
            return Self.status(of: contents)
        }
        statusListeners.notify(status)
    }

    private static func status(of contents: Contents) -> Replicator.Status {
        Replicator.Status(
            activity: contents.overall,
            progress: Replicator.Progress(completed: contents.completed, total: contents.total), error: contents.error)
    }
}
