/// One result row, detached from its statement: the values of its columns, by index or name.
///
/// ```swift
/// for row in try connection.query("SELECT id, seq FROM docs") {
///     let id = row["id"]?.stringValue
///     let seq = row[1].int64Value
/// }
/// ```
public struct Row: Sendable, Hashable {
    // MARK: - Properties

    /// The values, in column order.
    public let values: [SQLiteValue]

    /// The column names, shared by every row of a query.
    let columns: RowColumns

    /// Creates a row.
    ///
    /// - Parameters:
    ///   - values: The values, in column order.
    ///   - columns: The column names, shared with the other rows of the same query.
    init(values: [SQLiteValue], columns: RowColumns) {
        self.values = values
        self.columns = columns
    }

    /// The column names, in order.
    public var columnNames: [String] {
        columns.names
    }

    /// The number of columns.
    public var count: Int {
        values.count
    }

    // MARK: - Subscripts

    /// The value of a column by 0-based index.
    ///
    /// - Parameters:
    ///   - index: The 0-based column index; it must be valid.
    public subscript(index: Int) -> SQLiteValue {
        values[index]
    }

    /// The value of a column by name, compared case-insensitively like SQL; the first column of
    /// that name wins.
    ///
    /// - Parameters:
    ///   - column: The column name.
    /// - Returns: The value, or `nil` when the row has no such column.
    public subscript(column: String) -> SQLiteValue? {
        columns.index(of: column).map { values[$0] }
    }

    // MARK: - Hashable

    /// Rows are equal when their column names and values are equal.
    ///
    /// - Parameters:
    ///   - lhs: A row.
    ///   - rhs: Another row.
    /// - Returns: Whether they are equal.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.values == rhs.values && lhs.columns.names == rhs.columns.names
    }

    /// Hashes the values and column names.
    ///
    /// - Parameters:
    ///   - hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(values)
        hasher.combine(columns.names)
    }
}

/// The column names of a query, made once and shared by all its rows.
final class RowColumns: Sendable {
    /// The names, in order.
    let names: [String]

    /// Lower-cased name → first index.
    private let indexes: [String: Int]

    /// Creates the lookup table.
    ///
    /// - Parameters:
    ///   - names: The column names, in order.
    init(names: [String]) {
        self.names = names
        var indexes: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexes[name.lowercased()] == nil {
            indexes[name.lowercased()] = index
        }
        self.indexes = indexes
    }

    /// The index of a column, case-insensitively.
    ///
    /// - Parameters:
    ///   - name: The column name.
    /// - Returns: The first matching index, or `nil`.
    func index(of name: String) -> Int? {
        if let index = names.firstIndex(of: name) { return index }
        return indexes[name.lowercased()]
    }
}
