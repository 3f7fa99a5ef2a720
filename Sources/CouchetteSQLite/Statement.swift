import CSQLite

/// A prepared SQL statement: owns one `sqlite3_stmt*`.
///
/// Create statements with ``Connection/makeStatement(sql:)`` or reuse them with
/// ``Connection/cachedStatement(sql:)``. Bind parameters (1-based), ``step()`` through rows and
/// read columns (0-based):
///
/// ```swift
/// let statement = try connection.makeStatement(sql: "SELECT id, seq FROM docs WHERE seq > ?")
/// try statement.bind(10, at: 1)
/// while try statement.step() {
///     print(statement.string(at: 0), statement.int64(at: 1))
/// }
/// ```
///
/// ## Thread safety
///
/// `Statement` is not `Sendable`: use it from the isolation domain that created it. Calls that
/// run SQL (`step`, `bind…`, `reset`) take the connection's lock; column getters rely on SQLite's
/// serialized threading mode (or, in ``Connection/ThreadingMode/multiThread``, on the caller).
/// After the connection closes, those calls throw
/// ``SQLiteError/connectionClosed(sql:)``.
public final class Statement {
    // MARK: - Properties

    /// The SQL text of the statement.
    public let sql: String

    /// The number of result columns; 0 for statements that return no rows.
    public let columnCount: Int

    /// The number of parameters, i.e. the largest parameter index.
    public let parameterCount: Int

    /// The connection's handle and lock.
    let database: DatabaseHandle

    /// The prepared statement; `nil` once finalized.
    private(set) var handle: OpaquePointer?

    // MARK: - Life cycle

    /// Prepares one SQL statement.
    ///
    /// - Parameters:
    ///   - database: The connection's handle.
    ///   - sql: Exactly one SQL statement; a trailing `;`, whitespace or comments are allowed.
    ///   - persistent: Whether the statement will be kept for a long time (cached).
    /// - Throws: ``SQLiteError`` if SQLite cannot compile `sql`, if it holds no statement or more
    ///   than one, or if the connection is closed.
    init(database: DatabaseHandle, sql: String, persistent: Bool) throws {
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let handle: OpaquePointer = try database.withOpenHandle(sql: sql) { db in
            try sql.withCString { start -> OpaquePointer in
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                try SQLiteError.check(
                    sqlite3_prepare_v3(db, start, -1, flags, &statement, &tail), database: db, sql: sql)
                guard let statement else {
                    throw SQLiteError.misuse("SQL contains no statement", sql: sql)
                }
                if let tail, try Self.tailHasStatement(tail, database: db) {
                    sqlite3_finalize(statement)
                    throw SQLiteError.misuse(
                        "SQL contains more than one statement; use execute(_:) for scripts", sql: sql)
                }
                return statement
            }
        }
        self.sql = sql
        self.handle = handle
        self.database = database
        self.columnCount = Int(sqlite3_column_count(handle))
        self.parameterCount = Int(sqlite3_bind_parameter_count(handle))
    }

    deinit {
        // sqlite3_finalize(NULL) is a harmless no-op; its result repeats the last step error. Under the connection's
        // lock: a statement may be released on another thread than the one using the connection, and SQLite guards
        // nothing itself in multi-thread mode.
        database.withLock { _ = sqlite3_finalize(handle) }
    }

    /// Finalizes the statement now; later calls throw a closed-connection error.
    func finalize() {
        database.withLock {
            sqlite3_finalize(handle)
            handle = nil
        }
    }

    /// Whether the text after the first statement holds another statement (not just
    /// whitespace, semicolons or comments).
    private static func tailHasStatement(_ tail: UnsafePointer<CChar>, database: OpaquePointer) throws -> Bool {
        var cursor = tail
        while cursor.pointee != 0 {
            switch UInt8(bitPattern: cursor.pointee) {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
                 UInt8(ascii: ";"):
                cursor += 1
            default:
                // Rare: let SQLite tell comments from statements.
                var next: OpaquePointer?
                try SQLiteError.check(
                    sqlite3_prepare_v2(database, cursor, -1, &next, nil), database: database,
                    sql: String(cString: cursor))
                defer { sqlite3_finalize(next) }
                return next != nil
            }
        }
        return false
    }

    // MARK: - Execution

    /// Runs the statement until the next row or the end.
    ///
    /// - Returns: `true` when a row is available through the column getters, `false` when the
    ///   statement has finished.
    /// - Throws: ``SQLiteError`` when SQLite fails (constraint, busy…) or the connection is closed.
    public func step() throws -> Bool {
        try database.withOpenHandle(sql: sql) { db in
            guard let handle else { throw SQLiteError.connectionClosed(sql: sql) }
            return try SQLiteError.check(sqlite3_step(handle), database: db, sql: sql) == SQLITE_ROW
        }
    }

    /// Runs the statement to the end, ignoring any rows; for INSERT, UPDATE, DELETE and DDL.
    ///
    /// The statement is reset afterwards, and its bindings are kept.
    ///
    /// - Throws: ``SQLiteError`` when SQLite fails or the connection is closed.
    public func execute() throws {
        try database.withLock {
            defer { reset() }
            while try step() {}
        }
    }

    /// Resets the statement so that it can run again; bindings are kept.
    ///
    /// `sqlite3_reset` repeats the error of the last failed step, which ``step()`` has already
    /// thrown, so its result is deliberately ignored.
    public func reset() {
        database.withLock {
            _ = sqlite3_reset(handle)
        }
    }

    /// Sets every parameter back to `NULL`.
    public func clearBindings() {
        database.withLock {
            _ = sqlite3_clear_bindings(handle)
        }
    }

    /// Whether the statement has started stepping and has been neither finished nor reset.
    public var isBusy: Bool {
        database.withLock { sqlite3_stmt_busy(handle) != 0 }
    }

    /// Whether the statement makes no direct change to the database.
    public var isReadOnly: Bool {
        sqlite3_stmt_readonly(handle) != 0
    }
}
