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
                try storage.connection.execute("BEGIN IMMEDIATE")
            } catch {
                lock.unlock()
                throw DatabaseStorage.translate(error)
            }
            sequencesAtBegin = collectionRows.mapValues(\.lastSequence)
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
        let delivered: [CollectionChange]
        do {
            for (id, row) in collectionRows where sequencesAtBegin[id] != row.lastSequence {
                try storage.setLastSequence(row.lastSequence, collectionID: id)
            }
            try storage.connection.execute("COMMIT")
            delivered = pendingChanges
            pendingChanges = []
        } catch {
            rollBack(storage)
            lock.unlock()
            throw DatabaseStorage.translate(error)
        }
        lock.unlock()
        if !delivered.isEmpty {
            notifier.post(merging(delivered))
            expirySweeper?.schedule()
        }
        return result
    }

    private func rollBack(_ storage: DatabaseStorage) {
        try? storage.connection.execute("ROLLBACK")
        pendingChanges = []
        for (id, sequence) in sequencesAtBegin { collectionRows[id]?.lastSequence = sequence }
    }

    /// Merges the per-save changes of one commit into one change per collection.
    private func merging(_ changes: [CollectionChange]) -> [CollectionChange] {
        var order: [ObjectIdentifier] = []
        var merged: [ObjectIdentifier: CollectionChange] = [:]
        for change in changes {
            let key = ObjectIdentifier(change.collection)
            if let existing = merged[key] {
                merged[key] = CollectionChange(
                    collection: change.collection, changes: existing.changes + change.changes,
                    isExternal: existing.isExternal && change.isExternal)
            } else {
                order.append(key)
                merged[key] = change
            }
        }
        return order.map { merged[$0]! }
    }

    /// Records a change to deliver after commit. Callers are inside ``write(_:)``.
    func recordChange(_ change: DocumentChange, external: Bool) {
        pendingChanges.append(CollectionChange(collection: change.collection, changes: [change], isExternal: external))
    }

    /// The next sequence of a collection. Callers are inside ``write(_:)``.
    func nextSequence(collectionID: Int64) -> UInt64 {
        let next = (collectionRows[collectionID]?.lastSequence ?? 0) + 1
        collectionRows[collectionID]?.lastSequence = next
        return next
    }
}
