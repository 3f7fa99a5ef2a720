import CSQLite

// MARK: - Transactions

extension Connection {
    /// How a transaction takes its locks. See <https://www.sqlite.org/lang_transaction.html>.
    public enum TransactionKind: String, Sendable, Hashable, CaseIterable {
        /// Locks are taken on first read or write; an upgrade to write can fail with busy.
        case deferred = "DEFERRED"
        /// The write lock is taken at `BEGIN`, so a busy error can only happen there.
        case immediate = "IMMEDIATE"
        /// Like immediate; in rollback-journal modes it also keeps readers out.
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// The connection's lock is held throughout, so other threads cannot run statements inside
    /// the transaction. If `body` throws, or the commit fails, the transaction is rolled back
    /// and that first error is rethrown: a failing rollback never replaces it.
    ///
    /// ```swift
    /// let id = try connection.transaction { db in
    ///     try db.execute("INSERT INTO docs (id) VALUES (?)", "doc1")
    ///     return try db.lastInsertRowID
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - kind: How to begin; default ``TransactionKind/immediate`` (`BEGIN IMMEDIATE`).
    ///   - body: The work to do; it receives this connection.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` when `BEGIN` fails (busy, or already in a transaction: use
    ///   ``savepoint(_:)`` to nest) or `COMMIT` fails; otherwise what `body` throws.
    public func transaction<T>(
        _ kind: TransactionKind = .immediate, _ body: (Connection) throws -> T
    ) throws -> T {
        try database.withLock {
            try execute("BEGIN \(kind.rawValue) TRANSACTION", arguments: [])
            let result: T
            do {
                result = try body(self)
                try execute("COMMIT TRANSACTION", arguments: [])
            } catch {
                rollbackIgnoringErrors()
                throw error
            }
            return result
        }
    }

    /// Runs `body` in a savepoint: releases it when `body` returns, rolls back to it (and
    /// releases it) when `body` throws, then rethrows that first error.
    ///
    /// Savepoints nest inside transactions and inside each other; outside a transaction, the
    /// outermost savepoint acts as a deferred transaction. Each level has its own name.
    ///
    /// ```swift
    /// try connection.transaction { db in
    ///     try db.execute("INSERT INTO docs (id) VALUES ('kept')", arguments: [])
    ///     try? db.savepoint { db in
    ///         try db.execute("INSERT INTO docs (id) VALUES ('undone')", arguments: [])
    ///         throw CancellationError()
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - body: The work to do; it receives this connection.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` when the savepoint cannot be created or released; otherwise
    ///   what `body` throws.
    public func savepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        try database.withLock {
            // Names are unique among the savepoints alive at once, and reused, so the
            // statement cache stays small.
            savepointDepth += 1
            defer { savepointDepth -= 1 }
            let name = "couchette_savepoint_\(savepointDepth)"

            try execute("SAVEPOINT \(name)", arguments: [])
            let result: T
            do {
                result = try body(self)
                try execute("RELEASE SAVEPOINT \(name)", arguments: [])
            } catch {
                // Fails harmlessly if SQLite has already rolled the whole transaction back.
                if (try? isInTransaction) == true {
                    try? execute("ROLLBACK TRANSACTION TO SAVEPOINT \(name)", arguments: [])
                    try? execute("RELEASE SAVEPOINT \(name)", arguments: [])
                }
                throw error
            }
            return result
        }
    }

    /// Whether a transaction is open, i.e. the connection is not in autocommit mode
    /// (`sqlite3_get_autocommit`).
    ///
    /// - Throws: ``SQLiteError/connectionClosed(sql:)`` after ``close()``.
    public var isInTransaction: Bool {
        get throws {
            try database.withOpenHandle { sqlite3_get_autocommit($0) == 0 }
        }
    }

    // MARK: - Private

    /// Rolls back the open transaction, if any, keeping quiet about failures so that the
    /// caller's first error wins.
    private func rollbackIgnoringErrors() {
        guard (try? isInTransaction) == true else { return }
        try? execute("ROLLBACK TRANSACTION", arguments: [])
    }
}
