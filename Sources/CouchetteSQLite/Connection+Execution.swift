import CSQLite

// MARK: - Executing

extension Connection {
    /// Runs an SQL script: zero or more statements separated by semicolons, without arguments
    /// (`sqlite3_exec`).
    ///
    /// ```swift
    /// try connection.execute("""
    ///     CREATE TABLE docs (id TEXT PRIMARY KEY, body BLOB);
    ///     CREATE INDEX docs_body ON docs (body);
    ///     """)
    /// ```
    ///
    /// - Parameters:
    ///   - sql: The script. Never interpolate user data: use the variant with arguments.
    /// - Throws: ``SQLiteError`` naming the whole script when a statement fails; statements
    ///   before it have run.
    public func execute(_ sql: String) throws {
        try database.withOpenHandle(sql: sql) { db in
            try SQLiteError.check(sqlite3_exec(db, sql, nil, nil, nil), database: db, sql: sql)
        }
    }

    /// Runs one statement with positional arguments, through the statement cache.
    ///
    /// ```swift
    /// try connection.execute("INSERT INTO docs (id, body) VALUES (?, ?)", "doc1", nil)
    /// ```
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Throws: ``SQLiteError`` when preparing, binding (wrong argument count) or running fails.
    public func execute(_ sql: String, _ arguments: (any SQLiteBindable)?...) throws {
        try execute(sql, arguments: arguments)
    }

    /// Runs one statement with positional arguments, through the statement cache.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Throws: ``SQLiteError`` when preparing, binding (wrong argument count) or running fails.
    public func execute(_ sql: String, arguments: [(any SQLiteBindable)?]) throws {
        try withCachedStatement(sql) { statement in
            try statement.bind(arguments: arguments)
            try statement.execute()
        }
    }

    /// Runs one statement through the statement cache, binding its parameters in `bind` with the statement's
    /// typed `bind(_:at:)` methods: no argument array, no boxing, for statements run once per row written.
    ///
    /// ```swift
    /// try connection.execute("INSERT INTO docs (id, seq) VALUES (?, ?)") { statement in
    ///     try statement.bind(id, at: 1)
    ///     try statement.bind(sequence, at: 2)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - bind: Binds every parameter.
    /// - Throws: ``SQLiteError`` when preparing, binding or running fails, or what `bind` throws.
    public func execute(_ sql: String, binding bind: (Statement) throws -> Void) throws {
        try withCachedStatement(sql) { statement in
            try bind(statement)
            try statement.execute()
        }
    }

    /// Runs one statement with named arguments, through the statement cache.
    ///
    /// ```swift
    /// try connection.execute("UPDATE docs SET body = :body WHERE id = :id",
    ///                        named: ["id": "doc1", "body": body])
    /// ```
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: Values by parameter name, with or without the `:` prefix.
    /// - Throws: ``SQLiteError`` when preparing, binding (unknown name) or running fails.
    public func execute(_ sql: String, named arguments: [String: (any SQLiteBindable)?]) throws {
        try withCachedStatement(sql) { statement in
            try statement.bind(named: arguments)
            try statement.execute()
        }
    }

    // MARK: - Querying

    /// Runs a query with positional arguments and returns all its rows.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Returns: The rows, in order.
    /// - Throws: ``SQLiteError`` when preparing, binding or stepping fails.
    public func query(_ sql: String, _ arguments: (any SQLiteBindable)?...) throws -> [Row] {
        try query(sql, arguments: arguments)
    }

    /// Runs a query with positional arguments and returns all its rows.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Returns: The rows, in order.
    /// - Throws: ``SQLiteError`` when preparing, binding or stepping fails.
    public func query(_ sql: String, arguments: [(any SQLiteBindable)?]) throws -> [Row] {
        try withCachedStatement(sql) { statement in
            try statement.bind(arguments: arguments)
            return try statement.rows()
        }
    }

    /// Runs a query with named arguments and returns all its rows.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: Values by parameter name, with or without the `:` prefix.
    /// - Returns: The rows, in order.
    /// - Throws: ``SQLiteError`` when preparing, binding or stepping fails.
    public func query(_ sql: String, named arguments: [String: (any SQLiteBindable)?]) throws -> [Row] {
        try withCachedStatement(sql) { statement in
            try statement.bind(named: arguments)
            return try statement.rows()
        }
    }

    /// Runs a query and returns its first row.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Returns: The first row, or `nil` when there is none.
    /// - Throws: ``SQLiteError`` when preparing, binding or stepping fails.
    public func firstRow(_ sql: String, _ arguments: (any SQLiteBindable)?...) throws -> Row? {
        try withCachedStatement(sql) { statement in
            try statement.bind(arguments: arguments)
            return try statement.firstRow()
        }
    }

    /// Runs a query and returns the first column of its first row, e.g. for `SELECT count(*)`.
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Returns: The value, or `nil` when there is no row.
    /// - Throws: ``SQLiteError`` when preparing, binding or stepping fails.
    public func firstValue(_ sql: String, _ arguments: (any SQLiteBindable)?...) throws -> SQLiteValue? {
        try withCachedStatement(sql) { statement in
            try statement.bind(arguments: arguments)
            defer { statement.reset() }
            return try statement.step() ? statement.value(at: 0) : nil
        }
    }

    /// Runs a query and calls `body` for each row, with the statement positioned on it: the
    /// fastest way to read many rows, as nothing is allocated per row.
    ///
    /// ```swift
    /// try connection.forEachRow("SELECT id, seq FROM docs WHERE seq > ?", since) { row in
    ///     changes.append((row.string(at: 0), row.int64(at: 1)))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: Exactly one SQL statement.
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    ///   - body: Called once per row; it must not keep the statement.
    /// - Throws: ``SQLiteError`` when preparing, binding or stepping fails, or what `body` throws.
    public func forEachRow(
        _ sql: String, _ arguments: (any SQLiteBindable)?..., body: (Statement) throws -> Void
    ) throws {
        try withCachedStatement(sql) { statement in
            try statement.bind(arguments: arguments)
            try statement.forEachRow(body)
        }
    }

    // MARK: - Results of the last statement

    /// The rowid of the last successful INSERT on this connection (`sqlite3_last_insert_rowid`).
    ///
    /// - Throws: ``SQLiteError/connectionClosed(sql:)`` after ``close()``.
    public var lastInsertRowID: Int64 {
        get throws {
            try database.withOpenHandle { sqlite3_last_insert_rowid($0) }
        }
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    ///
    /// - Throws: ``SQLiteError/connectionClosed(sql:)`` after ``close()``.
    public var changes: Int {
        get throws {
            try database.withOpenHandle { Int(sqlite3_changes64($0)) }
        }
    }

    /// The number of rows changed since the connection opened (`sqlite3_total_changes64`).
    ///
    /// - Throws: ``SQLiteError/connectionClosed(sql:)`` after ``close()``.
    public var totalChanges: Int {
        get throws {
            try database.withOpenHandle { Int(sqlite3_total_changes64($0)) }
        }
    }

    // MARK: - Private

    /// Runs `body` with the cached statement for `sql` under the lock, then clears its
    /// bindings so that bound values are not kept in memory.
    private func withCachedStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        try database.withLock {
            let statement = try cachedStatement(sql: sql)
            defer { statement.clearBindings() }
            return try body(statement)
        }
    }
}
