// MARK: - Statements

extension Connection {
    /// Prepares a new statement, owned by the caller.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    /// - Returns: The statement.
    /// - Throws: ``SQLiteError`` when SQLite cannot compile `sql` (the error names it), when it
    ///   holds no statement or more than one, or when the connection is closed.
    public func makeStatement(sql: String) throws -> Statement {
        try Statement(database: database, sql: sql, persistent: false)
    }

    /// Returns the statement cached for this SQL text, reset and with its bindings cleared,
    /// preparing and caching it on first use.
    ///
    /// If the cached statement is still running (for example a query being iterated up the
    /// call stack) a fresh uncached statement is returned instead, so that iteration is not
    /// disturbed. Write SQL with parameters, not interpolated values, or the cache grows.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    /// - Returns: The shared statement; see the thread-safety notes on ``Connection``.
    /// - Throws: ``SQLiteError`` when SQLite cannot compile `sql`, or the connection is closed.
    public func cachedStatement(sql: String) throws -> Statement {
        try cachedStatement(.text(sql), sql: sql)
    }

    /// ``cachedStatement(sql:)`` for the SQL of `key`, found in the cache by the key's identity instead of its text.
    ///
    /// - Returns: The shared statement; see the thread-safety notes on ``Connection``.
    /// - Throws: ``SQLiteError`` when SQLite cannot compile the SQL, or the connection is closed.
    public func cachedStatement(_ key: StatementKey) throws -> Statement {
        try cachedStatement(.key(key), sql: key.sql)
    }

    private func cachedStatement(_ cacheKey: StatementCacheKey, sql: String) throws -> Statement {
        try database.withOpenHandle(sql: sql) { _ in
            if let statement = statementCache[cacheKey] {
                if statement.isBusy {
                    return try Statement(database: database, sql: sql, persistent: false)
                }
                statement.reset()
                statement.clearBindings()
                return statement
            }
            let statement = try Statement(database: database, sql: sql, persistent: true)
            statementCache[cacheKey] = statement
            return statement
        }
    }

    /// Forgets every cached statement. Statements still held elsewhere keep working.
    public func clearStatementCache() {
        database.withLock {
            statementCache.removeAll()
        }
    }
}

/// How the statement cache finds a statement: by its SQL text, or by a ``StatementKey``'s identity (held, so that
/// its address is not reused while cached).
enum StatementCacheKey: Hashable {
    case text(String)
    case key(StatementKey)
}
