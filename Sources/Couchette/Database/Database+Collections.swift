extension Database {
    /// The default scope, which always exists.
    public func defaultScope() throws -> Scope {
        try withStorage { _ in Scope(name: Database.defaultScopeName, database: self) }
    }

    /// The default collection, where 1.x-style data lives.
    public func defaultCollection() throws -> Collection {
        guard let collection = try collection(name: Database.defaultCollectionName, scope: Database.defaultScopeName)
        else { throw CouchetteError(.notFound, message: "The default collection was deleted") }
        return collection
    }

    /// The scopes that hold at least one collection (the default scope always).
    public func scopes() throws -> [Scope] {
        try withStorage { _ in
            let names = Set(collectionRows.values.map(\.scope)).union([Database.defaultScopeName])
            return names.sorted().map { Scope(name: $0, database: self) }
        }
    }

    /// A scope by name, or nil when it holds no collection.
    public func scope(name: String) throws -> Scope? {
        try scopes().first { $0.name == name }
    }

    /// The collections of a scope, sorted by name.
    public func collections(scope: String? = defaultScopeName) throws -> [Collection] {
        let scope = scope ?? Database.defaultScopeName
        return try withStorage { _ in
            collectionRows.values.filter { $0.scope == scope }.sorted { $0.name < $1.name }.map(collectionObject)
        }
    }

    /// A collection by name, or nil.
    ///
    /// - Throws: `.badInput` for an invalid name, `.notOpen` when closed.
    public func collection(name: String, scope: String? = defaultScopeName) throws -> Collection? {
        let scope = scope ?? Database.defaultScopeName
        try DatabaseNames.validateCollectionName(name, kind: "collection")
        try DatabaseNames.validateCollectionName(scope, kind: "scope")
        return try withStorage { _ in
            collectionRows.values.first { $0.scope == scope && $0.name == name }.map(collectionObject)
        }
    }

    /// Creates a collection, or returns the existing one.
    ///
    /// - Throws: `.badInput` for an invalid name (Couchbase Lite's rules: 1–251 of `A-Z a-z 0-9 _ - %`, not
    ///   starting with `_` or `%`).
    @discardableResult
    public func createCollection(name: String, scope: String? = defaultScopeName) throws -> Collection {
        if let existing = try collection(name: name, scope: scope) { return existing }
        let scope = scope ?? Database.defaultScopeName
        return try write { storage in
            let id = try storage.insertCollection(scope: scope, name: name)
            collectionRows[id] = DatabaseStorage.CollectionRow(id: id, scope: scope, name: name, lastSequence: 0)
            liveCollectionIDs.withLock { _ = $0.insert(id) }
            return collectionObject(collectionRows[id]!)
        }
    }

    /// Deletes a collection and its documents. Collection objects for it then throw `.notFound`.
    ///
    /// - Throws: `.notFound` when it does not exist.
    public func deleteCollection(name: String, scope: String? = defaultScopeName) throws {
        guard let collection = try collection(name: name, scope: scope) else {
            throw CouchetteError(.notFound, message: "No collection \(scope ?? Database.defaultScopeName).\(name)")
        }
        try write { storage in
            try storage.deleteCollection(id: collection.id)
            collectionRows[collection.id] = nil
            collectionObjects[collection.id] = nil
            liveCollectionIDs.withLock { _ = $0.remove(collection.id) }
        }
    }

    /// The cached object of a collection row. Callers hold the lock.
    private func collectionObject(_ row: DatabaseStorage.CollectionRow) -> Collection {
        if let existing = collectionObjects[row.id] { return existing }
        let collection = Collection(
            id: row.id, name: row.name, scope: Scope(name: row.scope, database: self))
        collectionObjects[row.id] = collection
        return collection
    }

    /// Throws `.notFound` when `collection` was deleted; needs no lock.
    func requireLive(_ collection: Collection) throws(CouchetteError) {
        guard liveCollectionIDs.withLock({ $0.contains(collection.id) }) else {
            throw CouchetteError(.notFound, message: "Collection \(collection.fullName) has been deleted")
        }
    }

    /// Checks that `collection` still exists and returns its row. Callers hold the lock.
    func requireRow(_ collection: Collection) throws(CouchetteError) -> DatabaseStorage.CollectionRow {
        guard let row = collectionRows[collection.id] else {
            throw CouchetteError(.notFound, message: "Collection \(collection.fullName) has been deleted")
        }
        return row
    }
}
