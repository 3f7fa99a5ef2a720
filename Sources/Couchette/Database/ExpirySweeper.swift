import Foundation

/// Purges expired documents: sweeps when the database opens, after commits, and at the next expiration
/// date, on a private queue.
final class ExpirySweeper: @unchecked Sendable {
    private weak var database: Database?
    private let queue = DispatchQueue(label: "couchette.expiry")
    private let lock = NSLock()
    private var timer: (any DispatchSourceTimer)?
    private var cancelled = false

    init(database: Database) {
        self.database = database
    }

    /// Sweeps now (asynchronously) and arms a timer for the next expiration.
    func schedule() {
        queue.async { [weak self] in self?.sweep() }
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            timer?.cancel()
            timer = nil
        }
    }

    private func sweep() {
        guard let database, !lock.withLock({ cancelled }) else { return }
        let now = Date().timeIntervalSince1970
        do {
            let expired = try database.withStorage { storage in try storage.expiredDocuments(at: now) }
            if !expired.isEmpty {
                try database.write { storage in
                    for (collectionID, documentID) in expired {
                        guard let collection = database.collectionObjectIfPresent(id: collectionID) else { continue }
                        try database.persistLastSequence(collectionID: collectionID, in: storage)
                        if try storage.removeDocument(collectionID: collectionID, id: documentID) {
                            database.recordChange(
                                DocumentChange(
                                    database: database, collection: collection, documentID: documentID,
                                    revisionID: "", sequence: 0, isDeletion: true, isCurrentRevision: true,
                                    inConflict: false, source: nil),
                                external: false)
                        }
                    }
                }
                Log.shared.emit(.info, .database, "Purged \(expired.count) expired document(s)")
            }
            let next = try database.withStorage { storage in try storage.nextExpiration() }
            arm(at: next)
        } catch CouchetteError.Code.notOpen {
            // Closed meanwhile: nothing to sweep.
        } catch {
            Log.shared.emit(.warning, .database, "Expiry sweep failed: \(error)")
        }
    }

    private func arm(at date: Double?) {
        lock.withLock {
            timer?.cancel()
            timer = nil
            guard !cancelled, let date else { return }
            let delay = max(0, date - Date().timeIntervalSince1970)
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + delay + 0.001)
            source.setEventHandler { [weak self] in self?.sweep() }
            source.resume()
            timer = source
        }
    }
}

extension Database {
    /// The collection object for a row ID, if the collection exists.
    func collectionObjectIfPresent(id: Int64) -> Collection? {
        lock.withLock {
            guard let row = collectionRows[id] else { return nil }
            if let existing = collectionObjects[id] { return existing }
            let collection = Collection(id: row.id, name: row.name, scope: Scope(name: row.scope, database: self))
            collectionObjects[id] = collection
            return collection
        }
    }
}
