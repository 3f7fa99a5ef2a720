import CouchetteCore
import Foundation
import Synchronization

// MARK: - Replicator

/// Replicates the configured collections with a target: a remote database (``URLEndpoint``: a Couchette gateway,
/// Sync Gateway, CouchDB) or another local database (``DatabaseEndpoint``).
///
/// ```swift
/// var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: "http://localhost:4984/todo")!))
/// config.addCollection(try db.defaultCollection())
/// config.authenticator = BasicAuthenticator(username: "user1", password: "pass")
/// let replicator = Replicator(config: config)
/// try await replicator.run()            // one shot: until both directions are caught up
/// print(replicator.status.progress)     // completed == total
/// ```
///
/// Push and pull run side by side. Pulled revisions enter the revision tree with their history, so concurrent
/// edits become conflicts, resolved by the app (``Collection/conflictingRevisions(documentID:)``). Checkpoints
/// are kept in local documents on both sides, so a later run sends only what changed since. Network errors and 5xx
/// answers make the replicator go offline and retry with capped exponential backoff; 401 and 403 stop it.
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
    private let state = ReplicatorState()
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// A replicator for `config`; nothing happens before ``run(reset:)`` or ``start(reset:)``.
    public init(config: ReplicatorConfiguration) {
        self.config = config
    }

    /// The current status.
    public var status: Status { state.status }

    /// Documents the target refused in the current or last run, with the reason (a refused document never stops a
    /// run).
    public var rejectedDocuments: [ReplicatedDocument] { state.rejected }

    // MARK: - Running

    /// Runs the replication: one-shot, until both directions are caught up; continuous, until ``stop()`` or the
    /// task is cancelled.
    ///
    /// - Parameter reset: Ignore saved checkpoints and examine every change again.
    /// - Throws: What stopped it (the status keeps it too): 401/403 at once, network errors once the retries are
    ///   spent; nothing when stopped.
    public func run(reset: Bool = false) async throws {
        state.begin()
        do {
            let passes = try passes()
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, pass) in passes.enumerated() {
                        group.addTask { try await self.drive(pass, index: index, reset: reset) }
                    }
                    // The first failure ends the replication: leaving the group by throwing cancels the other
                    // directions (`waitForAll()` would wait for them, e.g. a pull's long poll, while the push has 401).
                    while try await group.next() != nil {}
                }
            } catch {
                await Self.close(passes)
                throw error
            }
            await Self.close(passes)
            state.end(error: nil)
        } catch {
            if error is CancellationError {
                state.end(error: nil)
                return
            }
            let failure = CouchetteError.wrap(error)
            state.end(error: failure)
            throw failure
        }
    }

    /// Starts ``run(reset:)`` in the background; follow it with ``changes()`` or ``addChangeListener(withQueue:_:)``.
    public func start(reset: Bool = false) {
        let running = Task { _ = try? await run(reset: reset) }
        task.withLock { previous in
            previous?.cancel()
            previous = running
        }
    }

    /// Stops a replication started with ``start(reset:)``; the status becomes `.stopped`.
    public func stop() {
        task.withLock { $0?.cancel() }
    }

    // MARK: - Pending documents

    /// The documents of `collection` changed since the last push checkpoint: what the next push will examine.
    ///
    /// - Throws: `.badInput` when the collection is not replicated, or pushes are not configured.
    public func pendingDocumentIds(collection: Collection) throws -> Set<String> {
        guard config.replicatorType != .pull,
            config.collections.contains(where: { $0.collection.fullName == collection.fullName })
        else { throw CouchetteError(.badInput, message: "\(collection.fullName) is not pushed by this replicator") }
        let local = LocalReplicationPeer(collection: collection)
        // Named as the push pass names it, without opening (or creating) the target's collection.
        let target: String
        switch config.target {
        case let endpoint as DatabaseEndpoint:
            target = LocalReplicationPeer.identity(of: endpoint.database, collectionFullName: collection.fullName)
        default:
            target = try peer(matching: collection, channels: nil).identity
        }
        let replicationID = ReplicationPass.replicationID(source: local.identity, target: target, documentIDs: nil)
        let checkpoint = try local.storedCheckpoint(id: replicationID)
        let since = checkpoint?["lastSequence"]?.stringValue.flatMap(UInt64.init) ?? 0
        return Set(try collection.changes(since: since).map(\.documentID))
    }

    /// Whether the next push will examine document `documentID` of `collection`.
    public func isDocumentPending(_ documentID: String, collection: Collection) throws -> Bool {
        try pendingDocumentIds(collection: collection).contains(documentID)
    }

    // MARK: - Observing

    /// Every change of status, from now on, until the consumer stops iterating.
    public func changes() -> AsyncStream<ReplicatorChange> {
        state.statusListeners.stream { [weak self] status in
            self.map { ReplicatorChange(replicator: $0, status: status) }
        }
    }

    /// Calls `listener` with every change of status until the token is removed.
    ///
    /// - Parameter queue: Where to call it; a private serial queue when nil.
    @discardableResult
    public func addChangeListener(
        withQueue queue: DispatchQueue? = nil, _ listener: @escaping @Sendable (ReplicatorChange) -> Void
    ) -> ListenerToken {
        Self.add(listener, on: queue, to: state.statusListeners) { [weak self] status in
            self.map { ReplicatorChange(replicator: $0, status: status) }
        }
    }

    /// The documents of every batch from now on, pushed or pulled, refused ones with their error.
    public func documentReplications() -> AsyncStream<DocumentReplication> {
        state.documentListeners.stream { [weak self] batch in
            self.map { DocumentReplication(replicator: $0, isPush: batch.isPush, documents: batch.documents) }
        }
    }

    /// Calls `listener` with the documents of every batch until the token is removed.
    ///
    /// - Parameter queue: Where to call it; a private serial queue when nil.
    @discardableResult
    public func addDocumentReplicationListener(
        withQueue queue: DispatchQueue? = nil, _ listener: @escaping @Sendable (DocumentReplication) -> Void
    ) -> ListenerToken {
        Self.add(listener, on: queue, to: state.documentListeners) { [weak self] batch in
            self.map { DocumentReplication(replicator: $0, isPush: batch.isPush, documents: batch.documents) }
        }
    }

    /// Adds `listener` to `registry`, each value made public by `make` (nil once the replicator is gone) and
    /// delivered on `queue` (a private serial one when nil).
    private static func add<Value: Sendable, Public: Sendable>(
        _ listener: @escaping @Sendable (Public) -> Void, on queue: DispatchQueue?,
        to registry: ListenerRegistry<Value>, make: @escaping @Sendable (Value) -> Public?
    ) -> ListenerToken {
        let target = ListenerQueue.resolve(queue)
        return registry.add { value in
            guard let made = make(value) else { return }
            target.async { listener(made) }
        }
    }

    // MARK: - Passes

    /// One pass: runs it, then (continuous) waits for the source's next changes and runs it again; retries
    /// transient failures with backoff.
    private func drive(_ pass: ReplicationPass, index: Int, reset: Bool) async throws {
        var reset = reset
        var attempts = 0
        while true {
            do {
                state.set(.busy, pass: index)
                let since = try await pass.run(reset: reset) { report in state.record(report, of: pass) }
                reset = false
                attempts = 0
                state.set(.idle, pass: index)
                guard config.continuous else { return }
                try await pass.source.waitForChanges(since: since, timeout: config.heartbeatDuration)
                try Task.checkCancellation()
            } catch {
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                let failure = CouchetteError.wrap(error)
                attempts += 1
                guard Self.isTransient(failure), attempts < config.effectiveMaxAttempts else { throw failure }
                state.set(.offline, pass: index)
                try await Task.sleep(for: config.retryDelay(afterAttempt: attempts))
            }
        }
    }

    /// Closes what the passes' peers hold open (BLIP connections).
    private static func close(_ passes: [ReplicationPass]) async {
        for pass in passes {
            await pass.source.close()
            await pass.target.close()
        }
    }

    /// Network errors and 5xx answers are retried; the rest (401, 403, bad input…) stop the replicator.
    private static func isTransient(_ error: CouchetteError) -> Bool {
        error.code == .network || error.code == .timeout || error.code == .busy || error.status >= 500
    }

    private func passes() throws -> [ReplicationPass] {
        var passes: [ReplicationPass] = []
        for collectionConfig in config.collections {
            let local = LocalReplicationPeer(collection: collectionConfig.collection)
            if config.replicatorType != .pull {
                let remote = try peer(matching: collectionConfig.collection, channels: nil)
                var push = ReplicationPass(
                    source: local, target: remote, documentIDs: nil, batchSize: config.batchSize,
                    localCollection: collectionConfig.collection)
                push.isPush = true
                push.filter = Self.revisionFilter(collectionConfig.pushFilter, collection: collectionConfig.collection)
                passes.append(push)
            }
            if config.replicatorType != .push {
                let remote = try peer(matching: collectionConfig.collection, channels: collectionConfig.channels)
                var local = local
                local.conflictResolver = collectionConfig.conflictResolver
                local.autoPurge = config.enableAutoPurge
                var pull = ReplicationPass(
                    source: remote, target: local, documentIDs: collectionConfig.documentIDs.map(Set.init),
                    batchSize: config.batchSize, localCollection: collectionConfig.collection)
                pull.filter = Self.revisionFilter(collectionConfig.pullFilter, collection: collectionConfig.collection)
                passes.append(pull)
            }
        }
        return passes
    }

    /// A user's filter applied to replicated revisions, each shown as a document of `collection`.
    private static func revisionFilter(
        _ filter: ReplicationFilter?, collection: Collection
    ) -> (@Sendable (ReplicatedRevision) -> Bool)? {
        guard let filter else { return nil }
        return { revision in
            var body = revision.body
            BlobAttachments.fold(&body)  // the filter sees blobs as the app saved them
            body["_removed"] = nil
            let document = Document(
                id: revision.documentID, revisionID: revision.revisionID, sequence: 0, collection: collection,
                body: revision.isDeleted ? [:] : body)
            var flags: DocumentFlags = revision.isDeleted ? .deleted : []
            if revision.isAccessRemoval { flags.insert(.accessRemoved) }
            return filter(document, flags)
        }
    }

    /// The target's side of `collection`: the same collection of a local database, or the remote database (read
    /// through `channels` when given).
    private func peer(matching collection: Collection, channels: [String]?) throws -> any ReplicationPeer {
        switch config.target {
        case let endpoint as DatabaseEndpoint:
            let other =
                try endpoint.database.collection(name: collection.name, scope: collection.scope.name)
                ?? endpoint.database.createCollection(name: collection.name, scope: collection.scope.name)
            return LocalReplicationPeer(collection: other)
        case let endpoint as URLEndpoint where ["ws", "wss"].contains(endpoint.url.scheme?.lowercased()):
            return BLIPReplicationPeer(
                url: endpoint.url, authenticator: config.authenticator, headers: config.headers ?? [:],
                channels: channels, continuous: config.continuous, trust: ServerTrust(config),
                local: BLIPLocalContent(collection: collection))
        case let endpoint as URLEndpoint:
            let database = collection.database
            return RemoteReplicationPeer(
                url: endpoint.url, authenticator: config.authenticator, headers: config.headers ?? [:], channels: channels,
                trust: ServerTrust(config), holdsContent: { [weak database] digest in database?.currentBlobStore?.contains(digest) ?? false })
        default:
            throw CouchetteError(.unsupported, message: "Unknown endpoint type \(type(of: config.target))")
        }
    }
}

/// A document a replicator moved or failed to move.
public struct ReplicatedDocument: Sendable {
    /// The document ID.
    public let id: String
    /// The scope of its local collection.
    public let scope: String
    /// Its local collection.
    public let collection: String
    /// Whether the revision moved was a deletion.
    public let flags: DocumentFlags
    /// Why it was not stored, when it was not.
    public let error: CouchetteError?
}

/// A change of a replicator's status, as its listeners and ``Replicator/changes()`` deliver it.
public struct ReplicatorChange: Sendable {
    /// The replicator whose status changed.
    public let replicator: Replicator
    /// Its new status.
    public let status: Replicator.Status
}

/// Documents one batch of a replicator moved in one direction.
public struct DocumentReplication: Sendable {
    /// The replicator that moved them.
    public let replicator: Replicator
    /// Whether they were pushed (else pulled).
    public let isPush: Bool
    /// The documents, each with its error when the other side refused it.
    public let documents: [ReplicatedDocument]
}
