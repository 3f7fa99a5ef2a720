import Foundation

/// Delivers committed changes to listeners, each on its queue, after the commit (never from inside a
/// transaction).
final class ChangeNotifier: @unchecked Sendable {
    private enum Target {
        case collection(collectionID: Int64, listener: @Sendable (CollectionChange) -> Void)
        case document(collectionID: Int64, documentID: String, listener: @Sendable (DocumentChange) -> Void)
    }

    private struct Registration {
        let target: Target
        let queue: DispatchQueue
        let onClose: (@Sendable () -> Void)?
    }

    private let lock = NSLock()
    private var nextID: UInt64 = 1
    private var registrations: [UInt64: Registration] = [:]

    func addCollectionListener(
        collectionID: Int64, queue: DispatchQueue?, onClose: (@Sendable () -> Void)? = nil,
        _ listener: @escaping @Sendable (CollectionChange) -> Void
    ) -> ListenerToken {
        add(Registration(
            target: .collection(collectionID: collectionID, listener: listener), queue: ListenerQueue.resolve(queue),
            onClose: onClose))
    }

    func addDocumentListener(
        collectionID: Int64, documentID: String, queue: DispatchQueue?, onClose: (@Sendable () -> Void)? = nil,
        _ listener: @escaping @Sendable (DocumentChange) -> Void
    ) -> ListenerToken {
        add(Registration(
            target: .document(collectionID: collectionID, documentID: documentID, listener: listener),
            queue: ListenerQueue.resolve(queue), onClose: onClose))
    }

    private func add(_ registration: Registration) -> ListenerToken {
        let id = lock.withLock {
            let id = nextID
            nextID += 1
            registrations[id] = registration
            return id
        }
        return ListenerToken(id: id) { [weak self] id in self?.remove(id) }
    }

    func remove(_ id: UInt64) {
        lock.withLock { _ = registrations.removeValue(forKey: id) }
    }

    /// Whether anyone listens (so commits can skip building change notifications).
    var hasListeners: Bool { lock.withLock { !registrations.isEmpty } }

    /// Delivers one commit's changes.
    func post(_ changes: [CollectionChange]) {
        let snapshot = lock.withLock { Array(registrations.values) }
        for registration in snapshot {
            switch registration.target {
            case .collection(let collectionID, let listener):
                for change in changes where change.collection.id == collectionID {
                    registration.queue.async { listener(change) }
                }
            case .document(let collectionID, let documentID, let listener):
                for change in changes where change.collection.id == collectionID {
                    for documentChange in change.changes where documentChange.documentID == documentID {
                        registration.queue.async { listener(documentChange) }
                    }
                }
            }
        }
    }

    /// Removes every listener, ending the change streams (called when the database closes).
    func closeAll() {
        let removed = lock.withLock {
            let all = Array(registrations.values)
            registrations.removeAll()
            return all
        }
        for registration in removed {
            if let onClose = registration.onClose { registration.queue.async { onClose() } }
        }
    }
}
