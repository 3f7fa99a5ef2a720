// MARK: - Inserting many rows

extension Connection {
    /// The rows one statement of ``insert(_:into:columns:binding:)`` writes at most.
    static let rowsPerInsert = 64

    /// Inserts rows with multi-row `INSERT … VALUES (…), (…)` statements, through the statement cache: one statement
    /// runs per 64 rows (and a few for the rest) instead of one per row, which halves SQLite's cost per row when the
    /// rows are small.
    ///
    /// ```swift
    /// try connection.insert(rows, into: "docs (id, seq)", columns: 2) { row, statement, first in
    ///     try statement.bind(row.id, at: first)
    ///     try statement.bind(row.sequence, at: first + 1)
    /// }
    /// ```
    ///
    /// The statements are built for 64, 16, 4 and 1 rows (fewer when 64 rows would bind more than 999 values), so
    /// at most four are cached per table.
    ///
    /// - Parameters:
    ///   - rows: The rows, inserted in order.
    ///   - table: The table and its column list, e.g. `docs (id, seq)`; never user data.
    ///   - columns: How many columns each row binds.
    ///   - bind: Binds one row's `columns` values, from the 1-based parameter index `first` on.
    /// - Throws: ``SQLiteError`` when preparing or running fails (a constraint, for instance); rows of the
    ///   statements before have been inserted. What `bind` throws.
    public func insert<Rows: Collection>(
        _ rows: Rows, into table: String, columns: Int,
        binding bind: (Rows.Element, Statement, Int) throws -> Void
    ) throws {
        guard columns > 0 else { throw SQLiteError.misuse("an inserted row needs a column") }
        var start = rows.startIndex
        var remaining = rows.count
        var size = Self.rowsPerInsert
        // SQLite allows 999 parameters per statement in its oldest default builds.
        while size > 1 && size * columns > 999 { size /= 4 }
        var sql = ""
        while remaining > 0 {
            if size > remaining || sql.isEmpty {
                while size > remaining { size /= 4 }
                sql = "INSERT INTO \(table) VALUES " + Self.valueLists(rows: size, columns: columns)
            }
            let end = rows.index(start, offsetBy: size)
            try execute(sql) { statement in
                var first = 1
                for row in rows[start..<end] {
                    try bind(row, statement, first)
                    first += columns
                }
            }
            start = end
            remaining -= size
        }
    }

    /// `(?, ?), (?, ?)` for two rows of two columns.
    private static func valueLists(rows: Int, columns: Int) -> String {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        return Array(repeating: row, count: rows).joined(separator: ", ")
    }
}
