import CouchetteCore
import Foundation
import Synchronization

// MARK: - Replicator

/// Replicates the configured collections with a target: a remote database (``URLEndpoint``: a Couchette gateway,
/// Sync Gateway, CouchDB) or another local database (``DatabaseEndpoint``).
///
/// ```swift
/// var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: other))
/// config.addCollection(try db.defaultCollection())
/// let replicator = Replicator(config: config)
/// try await replicator.run()            // one shot: push then pull, until both sides are caught up
/// print(replicator.status.progress)     // completed == total
/// ```
///
/// Pulled revisions enter the revision tree with their history, so concurrent edits become conflicts, resolved by
/// the app (``Collection/conflictingRevisions(documentID:)``). Checkpoints are kept in local documents on both
/// sides, so a second run sends only what changed since.
public final class Replicator: Sendable {
    /// What the replicator is doing.
    public enum ActivityLevel: UInt8, Sendable {
        case stopped, offline, connecting, idle, busy
    }

    /// Changes examined out of those seen so far.
    public struct Progress: Sendable, Equatable {
        public let completed: UInt64
        public let total: UInt64
    }

    /// A snapshot of the replicator's state.
    public struct Status: Sendable {
        public let activity: ActivityLevel
        public let progress: Progress
        /// What stopped the replicator, if something did.
        public let error: CouchetteError?
    }

    /// The settings it was made with.
    public let config: ReplicatorConfiguration
    private let state = Mutex(
        Status(activity: .stopped, progress: Progress(completed: 0, total: 0), error: nil))
    private let documentErrors = Mutex<[ReplicatedDocument]>([])

    /// A replicator for `config`; nothing happens before ``run(reset:)``.
    public init(config: ReplicatorConfiguration) {
        self.config = config
    }

    /// The current status.
    public var status: Status { state.withLock { $0 } }

    /// Documents the target refused in the last run, with the reason (a refused document never stops a run).
    public var rejectedDocuments: [ReplicatedDocument] { documentErrors.withLock { $0 } }

    /// Runs one replication: push, then pull (as configured), each until caught up.
    ///
    /// - Parameter reset: Ignore saved checkpoints and examine every change again.
    /// - Throws: What stopped it (the status keeps it too); `CancellationError` when the task is cancelled.
    public func run(reset: Bool = false) async throws {
        documentErrors.withLock { $0 = [] }
        update(activity: .busy, error: nil, resetProgress: true)
        do {
            for pass in try passes() {
                try await pass.run(reset: reset) { report in record(report) }
            }
            update(activity: .stopped, error: nil)
        } catch {
            update(activity: .stopped, error: error is CancellationError ? nil : CouchetteError.wrap(error))
            throw error
        }
    }

    // MARK: - Private

    private func passes() throws -> [ReplicationPass] {
        var passes: [ReplicationPass] = []
        for collectionConfig in config.collections {
            let local = LocalReplicationPeer(collection: collectionConfig.collection)
            let remote = try peer(matching: collectionConfig.collection)
            if config.replicatorType != .pull {
                passes.append(ReplicationPass(source: local, target: remote, documentIDs: nil, batchSize: config.batchSize))
            }
            if config.replicatorType != .push {
                passes.append(
                    ReplicationPass(
                        source: remote, target: local, documentIDs: collectionConfig.documentIDs.map(Set.init),
                        batchSize: config.batchSize))
            }
        }
        return passes
    }

    /// The target's side of `collection`: the same collection of a local database, or the remote database.
    private func peer(matching collection: Collection) throws -> any ReplicationPeer {
        switch config.target {
        case let endpoint as DatabaseEndpoint:
            let other =
                try endpoint.database.collection(name: collection.name, scope: collection.scope.name)
                ?? endpoint.database.createCollection(name: collection.name, scope: collection.scope.name)
            return LocalReplicationPeer(collection: other)
        case let endpoint as URLEndpoint:
            return RemoteReplicationPeer(
                url: endpoint.url, authenticator: config.authenticator, headers: config.headers ?? [:])
        default:
            throw CouchetteError(.unsupported, message: "Unknown endpoint type \(type(of: config.target))")
        }
    }

    private func record(_ report: ReplicationPass.BatchReport) {
        let rejected = report.written.compactMap { result -> ReplicatedDocument? in
            guard let error = result.error else { return nil }
            return ReplicatedDocument(id: result.documentID, error: error)
        }
        if !rejected.isEmpty { documentErrors.withLock { $0 += rejected } }
        state.withLock { status in
            let progress = Progress(
                completed: status.progress.completed + UInt64(report.examined),
                total: status.progress.total + UInt64(report.examined))
            status = Status(activity: status.activity, progress: progress, error: status.error)
        }
    }

    private func update(activity: ActivityLevel, error: CouchetteError?, resetProgress: Bool = false) {
        state.withLock { status in
            status = Status(
                activity: activity, progress: resetProgress ? Progress(completed: 0, total: 0) : status.progress,
                error: error)
        }
    }
}

/// A document a replicator moved or failed to move.
public struct ReplicatedDocument: Sendable {
    /// The document ID.
    public let id: String
    /// Why it was not stored, when it was not.
    public let error: CouchetteError?
}
