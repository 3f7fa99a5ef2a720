import CouchetteCore
import Foundation

/// One row of a SQL++ query, read by column name or by position (Couchbase Lite's `Result`, renamed so it does not
/// shadow `Swift.Result`). A column whose value is missing has no key (``contains(key:)`` is false) and is nil by
/// position.
public final class QueryResult: DictionaryProtocol, ArrayProtocol, Sendable, CustomStringConvertible {
    /// The column names, in select-list order.
    public var columnNames: [String] { columns.names }
    /// The values by position; nil where missing.
    let values: [JSONValue?]
    private let columns: ResultColumns
    private let collection: Collection?

    init(columns: ResultColumns, values: [JSONValue?], collection: Collection?) {
        self.columns = columns
        self.values = values
        self.collection = collection
    }

    /// The number of columns.
    public var count: Int { values.count }
    /// The names of the columns that have a value, sorted.
    public var keys: [String] { json.keys.sorted() }
    /// The row as JSON values by column name (missing values left out).
    public var json: [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for (name, value) in zip(columns.names, values) { if let value { members[name] = value } }
        return members
    }

    // Read through light-weight containers made on demand: most rows are read by a few keys, or compared whole.
    private var dictionary: DictionaryObject { DictionaryObject(members: json, collection: collection) }
    private var array: ArrayObject { ArrayObject(elements: values.map { $0 ?? .null }, collection: collection) }

    public func value(forKey key: String) -> Any? {
        columns.index[key].flatMap { values[$0] }.map(DocumentValues.value(from:))
    }
    public func string(forKey key: String) -> String? { dictionary.string(forKey: key) }
    public func number(forKey key: String) -> NSNumber? { dictionary.number(forKey: key) }
    public func int(forKey key: String) -> Int { dictionary.int(forKey: key) }
    public func int64(forKey key: String) -> Int64 { dictionary.int64(forKey: key) }
    public func float(forKey key: String) -> Float { dictionary.float(forKey: key) }
    public func double(forKey key: String) -> Double { dictionary.double(forKey: key) }
    public func boolean(forKey key: String) -> Bool { dictionary.boolean(forKey: key) }
    public func blob(forKey key: String) -> Blob? { dictionary.blob(forKey: key) }
    public func date(forKey key: String) -> Date? { dictionary.date(forKey: key) }
    public func array(forKey key: String) -> ArrayObject? { dictionary.array(forKey: key) }
    public func dictionary(forKey key: String) -> DictionaryObject? { dictionary.dictionary(forKey: key) }
    public func contains(key: String) -> Bool { columns.index[key].map { values[$0] != nil } ?? false }
    public func toDictionary() -> [String: Any] { dictionary.toDictionary() }
    public func toJSON() -> String { dictionary.toJSON() }
    public subscript(key: String) -> Fragment { dictionary[key] }

    public func value(at index: Int) -> Any? { values.indices.contains(index) && values[index] != nil ? array.value(at: index) : nil }
    public func string(at index: Int) -> String? { array.string(at: index) }
    public func int(at index: Int) -> Int { array.int(at: index) }
    public func int64(at index: Int) -> Int64 { array.int64(at: index) }
    public func float(at index: Int) -> Float { array.float(at: index) }
    public func double(at index: Int) -> Double { array.double(at: index) }
    public func number(at index: Int) -> NSNumber? { array.number(at: index) }
    public func boolean(at index: Int) -> Bool { array.boolean(at: index) }
    public func blob(at index: Int) -> Blob? { array.blob(at: index) }
    public func date(at index: Int) -> Date? { array.date(at: index) }
    public func array(at index: Int) -> ArrayObject? { array.array(at: index) }
    public func dictionary(at index: Int) -> DictionaryObject? { array.dictionary(at: index) }
    public func toArray() -> [Any] { array.toArray() }
    public subscript(index: Int) -> Fragment { array[index] }

    public var description: String { "QueryResult(\(toJSON()))" }
}

/// The column names of a result set, shared by its rows, with the position of each name (the last one, for names
/// that repeat).
final class ResultColumns: Sendable {
    let names: [String]
    let index: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        self.index = index
    }
}

/// The rows of one run of a query, read once in order (Couchbase Lite's `ResultSet`).
public final class ResultSet: Sequence, IteratorProtocol, @unchecked Sendable {
    private let rows: [QueryResult]
    private let lock = NSLock()
    private var position = 0

    /// The column names.
    public let columnNames: [String]

    init(rows: [QueryResult], columnNames: [String]) {
        self.rows = rows
        self.columnNames = columnNames
    }

    /// The next row, or nil after the last.
    public func next() -> QueryResult? {
        lock.withLock {
            guard position < rows.count else { return nil }
            defer { position += 1 }
            return rows[position]
        }
    }

    /// The rows not read yet.
    public func allResults() -> [QueryResult] {
        lock.withLock {
            defer { position = rows.count }
            return Array(rows[position...])
        }
    }

    /// Every row (whatever was read already), for comparing runs.
    var everyRow: [QueryResult] { rows }

    /// The same rows, unread, for one listener or stream: another's reading does not drain it.
    func unread() -> ResultSet { ResultSet(rows: rows, columnNames: columnNames) }
}
