import CouchetteSQLite
import Foundation

extension Database {
    /// Runs `block` in one transaction across all collections. A throw rolls everything back; nested calls
    /// join the outer transaction; listeners fire once, after the outermost commit.
    ///
    /// ```swift
    /// try db.inBatch {
    ///     for name in ["Milk", "Eggs"] { try tasks.save(document: MutableDocument(data: ["task": name])) }
    /// }
    /// ```
    public func inBatch(using block: () throws -> Void) throws {
        try write { _ in try block() }
    }

    /// The 1.x form: return false (or throw) to roll back.
    ///
    /// - Returns: Whether the transaction committed.
    @discardableResult
    public func inTransaction(_ block: () throws -> Bool) throws -> Bool {
        struct RollBack: Error {}
        do {
            try write { _ in
                guard try block() else { throw RollBack() }
            }
            return true
        } catch is RollBack {
            return false
        }
    }

    /// Runs `body` inside a write transaction (joining one in progress) and delivers the changes it
    /// recorded after the outermost commit.
    ///
    /// - Throws: `.forbidden` for a read-only database, `.notOpen` when closed, or `body`'s error (after
    ///   rolling back when it is the outermost transaction).
    func write<T>(_ body: (DatabaseStorage) throws -> T) throws -> T {
        guard !config.readOnly else { throw CouchetteError(.forbidden, message: "The database is read-only") }
        lock.lock()
        guard let storage else {
            lock.unlock()
            throw CouchetteError(.notOpen, message: "Database \"\(name)\" is closed")
        }
        if transactionDepth == 0 {
            do {
                try storage.begin()
            } catch {
                lock.unlock()
                throw DatabaseStorage.translate(error)
            }
            sequencesAtBegin.removeAll(keepingCapacity: true)
            lastSequenceAtBegin = lastSequence
        }
        transactionDepth += 1
        let result: T
        do {
            result = try body(storage)
        } catch {
            transactionDepth -= 1
            if transactionDepth == 0 { rollBack(storage) }
            lock.unlock()
            throw error
        }
        transactionDepth -= 1
        guard transactionDepth == 0 else {
            lock.unlock()
            return result
        }
        let delivered: [(change: DocumentChange, external: Bool)]
        do {
            try storage.commit()
            delivered = pendingChanges
            pendingChanges = []
        } catch {
            rollBack(storage)
            lock.unlock()
            throw DatabaseStorage.translate(error)
        }
        lock.unlock()
        if !delivered.isEmpty, notifier.hasListeners { notifier.post(merging(delivered)) }
        return result
    }

    private func rollBack(_ storage: DatabaseStorage) {
        storage.rollBack()
        pendingChanges = []
        for (id, sequence) in sequencesAtBegin { collectionRows[id]?.lastSequence = sequence }
        lastSequence = lastSequenceAtBegin
    }

    /// Groups one commit's changes into one change per collection, in commit order.
    private func merging(_ changes: [(change: DocumentChange, external: Bool)]) -> [CollectionChange] {
        var order: [ObjectIdentifier] = []
        var grouped: [ObjectIdentifier: (collection: Collection, changes: [DocumentChange], external: Bool)] = [:]
        for (change, external) in changes {
            let key = ObjectIdentifier(change.collection)
            if grouped[key] == nil {
                order.append(key)
                grouped[key] = (change.collection, [], true)
            }
            grouped[key]!.changes.append(change)
            grouped[key]!.external = grouped[key]!.external && external
        }
        return order.map { key in
            let group = grouped[key]!
            return CollectionChange(collection: group.collection, changes: group.changes, isExternal: group.external)
        }
    }

    /// Records a change to deliver after commit. Callers are inside ``write(_:)``.
    func recordChange(_ change: DocumentChange, external: Bool) {
        pendingChanges.append((change, external))
    }

    /// Persists a collection's last sequence before a purge removes the document that carries it, so the
    /// sequence is never reused after reopening. Callers are inside ``write(_:)``.
    func persistLastSequence(collectionID: Int64, in storage: DatabaseStorage) throws(CouchetteError) {
        guard let row = collectionRows[collectionID] else { return }
        try storage.setLastSequence(row.lastSequence, collectionID: collectionID)
    }

    /// The sequence the next change to a collection gets. Callers are inside ``write(_:)``.
    func peekNextSequence(collectionID: Int64) -> UInt64 {
        lastSequence + 1
    }

    /// Records that a change took `sequence` (from ``peekNextSequence(collectionID:)``). The stored
    /// sequences stay the truth: the highest is found again when the database opens. Callers are inside
    /// ``write(_:)``.
    func takeNextSequence(_ sequence: UInt64, collectionID: Int64) {
        if sequencesAtBegin[collectionID] == nil {
            sequencesAtBegin[collectionID] = collectionRows[collectionID]?.lastSequence ?? 0
        }
        collectionRows[collectionID]?.lastSequence = sequence
        lastSequence = sequence
    }
}
