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
        var listeners: [UInt64: @Sendable (Replicator.Status) -> Void] = [:]
        var nextListenerID: UInt64 = 0
    }

    private let contents = Mutex(Contents())

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

    /// Records a batch.
    func record(_ report: ReplicationPass.BatchReport) {
        update { contents in
            contents.completed += UInt64(report.examined)
            contents.total += UInt64(report.examined)
            contents.rejected += report.written.compactMap { result in
                result.error.map { ReplicatedDocument(id: result.documentID, error: $0) }
            }
        }
    }

    /// Ends a run, with the error that stopped it if any.
    func end(error: CouchetteError?) {
        update { contents in
            contents.overall = .stopped
            contents.error = error
        }
    }

    /// Calls `listener` with every new status until the returned ID is removed.
    func addListener(_ listener: @escaping @Sendable (Replicator.Status) -> Void) -> UInt64 {
        contents.withLock { contents in
            contents.nextListenerID += 1
            contents.listeners[contents.nextListenerID] = listener
            return contents.nextListenerID
        }
    }

    func removeListener(_ id: UInt64) {
        _ = contents.withLock { $0.listeners.removeValue(forKey: id) }
    }

    // MARK: - Private

    private func update(_ change: (inout Contents) -> Void) {
        let (status, listeners) = contents.withLock { contents in
            change(&contents)
            return (Self.status(of: contents), Array(contents.listeners.values))
        }
        for listener in listeners { listener(status) }
    }

    private static func status(of contents: Contents) -> Replicator.Status {
        Replicator.Status(
            activity: contents.overall,
            progress: Replicator.Progress(completed: contents.completed, total: contents.total), error: contents.error)
    }
}
