// MARK: - Iterating rows

extension Statement {
    /// Steps through every row, calling `body` with the statement positioned on the row, and
    /// resets the statement at the end, even when `body` throws.
    ///
    /// Read the columns inside `body` with the typed getters: nothing is allocated per row.
    ///
    /// ```swift
    /// try statement.forEachRow { row in
    ///     total += row.int64(at: 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - body: Called once per row; it must not keep the statement.
    /// - Throws: ``SQLiteError`` when stepping fails, or what `body` throws.
    public func forEachRow(_ body: (Statement) throws -> Void) throws {
        try database.withLock {
            defer { reset() }
            while try step() {
                try body(self)
            }
        }
    }

    /// Steps through every row and collects them as ``Row`` values, then resets the statement.
    ///
    /// - Returns: The rows, in order.
    /// - Throws: ``SQLiteError`` when stepping fails.
    public func rows() throws -> [Row] {
        let columns = RowColumns(names: columnNames)
        var rows: [Row] = []
        try forEachRow { statement in
            rows.append(Row(values: statement.currentValues(), columns: columns))
        }
        return rows
    }

    /// Steps once and returns the first row, if any, then resets the statement.
    ///
    /// - Returns: The first row, or `nil` when there is none.
    /// - Throws: ``SQLiteError`` when stepping fails.
    public func firstRow() throws -> Row? {
        try database.withLock {
            defer { reset() }
            guard try step() else { return nil }
            return Row(values: currentValues(), columns: RowColumns(names: columnNames))
        }
    }

    /// The values of the current row: one allocation, for the array.
    func currentValues() -> [SQLiteValue] {
        var values: [SQLiteValue] = []
        values.reserveCapacity(columnCount)
        for index in 0..<columnCount {
            values.append(value(at: index))
        }
        return values
    }
}
