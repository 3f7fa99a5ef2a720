import Foundation

extension Collection {
    /// Calls `listener` after each commit that changes documents of this collection.
    ///
    /// ```swift
    /// let token = tasks.addChangeListener { change in print("changed:", change.documentIDs) }
    /// defer { token.remove() }
    /// ```
    /// - Parameter queue: Where to call it; a private serial queue when nil.
    @discardableResult
    public func addChangeListener(
        withQueue queue: DispatchQueue? = nil, listener: @escaping @Sendable (CollectionChange) -> Void
    ) -> ListenerToken {
        database.notifier.addCollectionListener(collectionID: id, queue: queue, listener)
    }

    /// Calls `listener` after each commit that changes the document `id`, deletions and purges included.
    @discardableResult
    public func addDocumentChangeListener(
        id documentID: String, queue: DispatchQueue? = nil, listener: @escaping @Sendable (DocumentChange) -> Void
    ) -> ListenerToken {
        database.notifier.addDocumentListener(collectionID: id, documentID: documentID, queue: queue, listener)
    }

    /// The collection's changes as an async sequence; it ends when the task is cancelled or the database
    /// closes, and then removes its listener.
    ///
    /// ```swift
    /// for await change in tasks.changes() where change.isExternal { refresh(change.documentIDs) }
    /// ```
    public func changes() -> AsyncStream<CollectionChange> {
        AsyncStream { continuation in
            let token = database.notifier.addCollectionListener(
                collectionID: id, queue: nil, onClose: { continuation.finish() }
            ) { change in continuation.yield(change) }
            continuation.onTermination = { _ in token.remove() }
        }
    }

    /// One document's changes as an async sequence; ends like ``changes()``.
    public func documentChanges(id documentID: String) -> AsyncStream<DocumentChange> {
        AsyncStream { continuation in
            let token = database.notifier.addDocumentListener(
                collectionID: id, documentID: documentID, queue: nil, onClose: { continuation.finish() }
            ) { change in continuation.yield(change) }
            continuation.onTermination = { _ in token.remove() }
        }
    }
}

extension Database {
    /// The default collection's changes; see ``Collection/changes()``.
    public func changes() throws -> AsyncStream<CollectionChange> { try defaultCollection().changes() }

    /// One document's changes in the default collection; see ``Collection/documentChanges(id:)``.
    public func documentChanges(id: String) throws -> AsyncStream<DocumentChange> {
        try defaultCollection().documentChanges(id: id)
    }
}
