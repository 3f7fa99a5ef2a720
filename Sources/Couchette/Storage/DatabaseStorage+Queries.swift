import CouchetteSQLite

// MARK: - Compiled queries

extension DatabaseStorage {
    /// Runs a query's SQL (from a cached statement) with `bindings` by parameter name (`:p_name`), calling `body`
    /// with the statement positioned on each row.
    func forEachRow(
        ofQuery sql: String, bindings: [(name: String, value: SQLiteValue)], _ body: (Statement) throws -> Void
    ) throws(CouchetteError) {
        try run {
            let statement = try connection.cachedStatement(sql: sql)
            defer { statement.reset() }
            for (name, value) in bindings { try statement.bind(value, at: statement.parameterIndex(named: name)) }
            try statement.forEachRow(body)
        }
    }

    /// SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), a line per step.
    func queryPlan(of sql: String) throws(CouchetteError) -> [String] {
        try run { try connection.query("EXPLAIN QUERY PLAN " + sql, named: [:]).map { $0[3].stringValue ?? "" } }
    }
}
