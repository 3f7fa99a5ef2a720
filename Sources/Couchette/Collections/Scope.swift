/// A namespace of collections; the default scope always exists.
public final class Scope: Sendable, Hashable, CustomStringConvertible {
    /// The scope's name.
    public let name: String
    /// The database it belongs to.
    public let database: Database

    init(name: String, database: Database) {
        self.name = name
        self.database = database
    }

    /// Its collections, sorted by name.
    public func collections() throws -> [Collection] { try database.collections(scope: name) }

    /// One of its collections by name, or nil.
    public func collection(name: String) throws -> Collection? { try database.collection(name: name, scope: self.name) }

    public var description: String { "Scope(\(name))" }

    public static func == (lhs: Scope, rhs: Scope) -> Bool { lhs.name == rhs.name && lhs.database === rhs.database }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
