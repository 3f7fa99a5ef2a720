/// How to build an index of a collection.
public protocol IndexConfiguration: Sendable {
    /// The SQL++ expressions indexed.
    var expressions: [String] { get }
}

/// A value index: an SQLite index over SQL++ expressions of the documents (`["type", "owner.id"]`), used by queries
/// that filter or sort on the same expressions.
///
/// ```swift
/// try tasks.createIndex(withName: "byList", config: ValueIndexConfiguration(["taskList.id", "complete"]))
/// ```
public struct ValueIndexConfiguration: IndexConfiguration, Hashable {
    public let expressions: [String]
    /// Index only the documents for which this SQL++ condition holds (a partial index).
    public let whereClause: String?

    public init(_ expressions: [String], where whereClause: String? = nil) {
        self.expressions = expressions
        self.whereClause = whereClause
    }
}
