// MARK: - QueryIndex

/// A handle on an index of a collection, as Couchbase Lite 3's `QueryIndex`: its name and collection.
///
/// ```swift
/// try tasks.createIndex(withName: "byList", config: ValueIndexConfiguration(["taskList.id"]))
/// let index = try tasks.index(withName: "byList")   // nil once deleted
/// ```
public final class QueryIndex: Sendable, CustomStringConvertible {
    /// The index's name, unique in its collection.
    public let name: String
    /// The collection it indexes.
    public let collection: Collection

    init(name: String, collection: Collection) {
        self.name = name
        self.collection = collection
    }

    public var description: String { "QueryIndex(\(collection.fullName).\(name))" }
}

extension Collection {
    /// The index named `name`, or nil when the collection has none of that name.
    public func index(withName name: String) throws -> QueryIndex? {
        try indexes().contains(name) ? QueryIndex(name: name, collection: self) : nil
    }
}
