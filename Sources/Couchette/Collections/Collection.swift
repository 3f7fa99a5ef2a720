/// Documents with unique IDs. Like Couchbase Lite's, it shadows `Swift.Collection`; spell that one out when
/// you need it.
///
/// ```swift
/// let tasks = try db.createCollection(name: "tasks", scope: "todo")
/// print(tasks.fullName, tasks.count)     // todo.tasks 0
/// ```
public final class Collection: Sendable, Hashable, CustomStringConvertible {
    /// The collection's name.
    public let name: String
    /// Its scope.
    public let scope: Scope
    /// The row ID of the collection in the database file.
    let id: Int64

    init(id: Int64, name: String, scope: Scope) {
        self.id = id
        self.name = name
        self.scope = scope
    }

    /// The database it belongs to.
    public var database: Database { scope.database }

    /// `scope.name` (`_default.tasks`).
    public var fullName: String { "\(scope.name).\(name)" }

    /// The number of documents that are not deleted; 0 once the database is closed.
    public var count: UInt64 {
        (try? read { storage in try storage.liveDocumentCount(collectionID: id) }) ?? 0
    }

    /// The sequence of the last change; 0 once the database is closed.
    public var lastSequence: UInt64 {
        (try? database.withStorage { _ in try database.requireRow(self).lastSequence }) ?? 0
    }

    public var description: String { "Collection(\(fullName))" }

    public static func == (lhs: Collection, rhs: Collection) -> Bool {
        lhs.id == rhs.id && lhs.database === rhs.database
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
