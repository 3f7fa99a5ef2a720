import Foundation

// MARK: - Views and all-documents queries

extension Collection {
    /// The view named `name` in this collection, made on first use (its index is created by the first update once a
    /// map block is set). The same object is returned while the database is open.
    public func view(named name: String) -> MapReduceView {
        database.mapReduceView(named: name, in: self, create: true)!
    }

    /// The view named `name` if it was made in this session or has a stored index; nil otherwise.
    public func existingView(named name: String) -> MapReduceView? {
        if let view = database.mapReduceView(named: name, in: self, create: false) { return view }
        let stored = try? read { storage in try storage.view(collectionID: id, name: name) }
        guard stored != nil else { return nil }
        return view(named: name)
    }

    /// The names of the views with a stored index.
    public func viewNames() throws -> [String] {
        try read { storage in try storage.viewNames(collectionID: id) }
    }

    /// A query over every document by ID: each row's key is the ID and its value `{"rev": …}`.
    public func createAllDocumentsQuery() -> ViewQuery {
        ViewQuery(source: .allDocuments(self))
    }
}

extension Database {
    /// ``Collection/view(named:)`` of the default collection.
    public func view(named name: String) throws -> MapReduceView {
        try defaultCollection().view(named: name)
    }

    /// ``Collection/existingView(named:)`` of the default collection.
    public func existingView(named name: String) throws -> MapReduceView? {
        try defaultCollection().existingView(named: name)
    }

    /// ``Collection/createAllDocumentsQuery()`` of the default collection.
    public func createAllDocumentsQuery() throws -> ViewQuery {
        try defaultCollection().createAllDocumentsQuery()
    }

    /// The view object of `name` in `collection`, made when `create`.
    func mapReduceView(named name: String, in collection: Collection, create: Bool) -> MapReduceView? {
        lock.withLock {
            let key = "\(collection.id)/\(name)"
            if let view = mapReduceViews[key] { return view }
            guard create else { return nil }
            let view = MapReduceView(name: name, collection: collection)
            mapReduceViews[key] = view
            return view
        }
    }

    /// Forgets a deleted view's object.
    func forgetView(_ view: MapReduceView) {
        lock.withLock { _ = mapReduceViews.removeValue(forKey: "\(view.collection.id)/\(view.name)") }
    }
}
