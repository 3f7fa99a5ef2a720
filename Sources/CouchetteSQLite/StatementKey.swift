// MARK: - StatementKey

/// A statement's SQL as a key of the connection's statement cache that is found by its identity: for the hottest
/// statements, whose text ``Connection/cachedStatement(sql:)`` would hash on every call. Keep one per statement,
/// for the program's life (a `static let`).
///
/// ```swift
/// static let selectBody = StatementKey("SELECT body FROM docs WHERE id = ?")
/// let statement = try connection.cachedStatement(Self.selectBody)
/// ```
public final class StatementKey: Hashable, Sendable {
    /// Exactly one SQL statement.
    public let sql: String

    /// A key for `sql`.
    public init(_ sql: String) {
        self.sql = sql
    }

    public static func == (lhs: StatementKey, rhs: StatementKey) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
