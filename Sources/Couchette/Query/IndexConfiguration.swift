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

/// A full-text index (SQLite FTS5) over SQL++ expressions of the documents, searched with `MATCH(index, terms)` and
/// ordered with `RANK(index)` (higher is a better match).
///
/// ```swift
/// try tasks.createIndex(withName: "taskFTS", config: FullTextIndexConfiguration(["task"], language: "en"))
/// let query = try db.createQuery("SELECT META().id FROM todo.tasks WHERE MATCH(taskFTS, $term) ORDER BY RANK(taskFTS) DESC")
/// ```
public struct FullTextIndexConfiguration: IndexConfiguration, Hashable {
    public let expressions: [String]
    /// Index only the documents for which this SQL++ condition holds.
    public let whereClause: String?
    /// Whether accents are ignored (`"café"` matches `"cafe"`).
    public let ignoreAccents: Bool
    /// The language of the text: `"en"` stems English words (Porter), so `"running"` matches `"run"`; other
    /// languages (or nil) match whole words.
    public let language: String?

    public init(_ expressions: [String], where whereClause: String? = nil, ignoreAccents: Bool = false, language: String? = nil) {
        self.expressions = expressions
        self.whereClause = whereClause
        self.ignoreAccents = ignoreAccents
        self.language = language
    }

    /// The FTS5 tokenizer for the options.
    var tokenizer: String {
        let words = "unicode61 remove_diacritics \(ignoreAccents ? 2 : 0)"
        return ["en", "english"].contains(language?.lowercased() ?? "") ? "porter \(words)" : words
    }
}
