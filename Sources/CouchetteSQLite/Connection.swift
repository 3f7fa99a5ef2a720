import CSQLite

/// A connection to an SQLite database: owns one `sqlite3*` handle.
///
/// ```swift
/// let connection = try Connection(path: "/data/app.sqlite")
/// try connection.execute("CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, body BLOB)")
/// try connection.transaction { db in
///     try db.execute("INSERT INTO docs (id, body) VALUES (?, ?)", "doc1", body)
/// }
/// ```
///
/// ## Thread safety
///
/// A connection may be shared between threads and tasks: every operation takes the connection's
/// recursive lock, so calls are serialised, and ``transaction(_:_:)``, ``savepoint(_:)`` and
/// ``withExclusiveAccess(_:)`` hold the lock for their whole closure, so no other thread can
/// slip statements into a transaction. The handle is also opened with `SQLITE_OPEN_FULLMUTEX`
/// (``ThreadingMode/serialized``), which makes column reads from a ``Statement`` safe while
/// another thread steps another one; a caller that uses the connection from one thread at a time
/// can open it in ``ThreadingMode/multiThread`` instead.
/// A closure that holds the lock must not wait for another thread that uses the same connection.
/// For parallel work open several connections: in WAL mode readers do not block the writer.
///
/// Statements are not `Sendable`; a statement from ``cachedStatement(sql:)`` is shared, so use it
/// inside ``withExclusiveAccess(_:)`` (or a transaction) when other threads use the connection.
///
/// The first connection opened turns SQLite's memory statistics off for the process
/// (``turnOffMemoryStatistics()``).
///
/// ## Closing
///
/// ``close()`` is idempotent, and `deinit` calls it. Afterwards every operation, including
/// those of the connection's statements, throws ``SQLiteError/connectionClosed(sql:)``
/// (`SQLITE_MISUSE`) instead of crashing.
public final class Connection: @unchecked Sendable {
    // MARK: - Properties

    /// The path or URI the connection was opened with.
    public let path: String

    /// The options the connection was opened with.
    public let options: Options

    /// The handle and its lock, shared with the statements.
    let database: DatabaseHandle

    /// Prepared statements by SQL text. Guarded by `database`'s lock.
    var statementCache: [StatementCacheKey: Statement] = [:]

    /// The number of ``savepoint(_:)`` closures running. Guarded by `database`'s lock.
    var savepointDepth = 0

    // MARK: - Life cycle

    /// Opens a database, applies the options, and reads the schema once so that a file that
    /// is not a database fails here.
    ///
    /// - Parameters:
    ///   - path: A file path, `":memory:"` for a private in-memory database, `""` for a private
    ///     temporary database, or a `file:` URI such as `file:app.sqlite?mode=ro`.
    ///   - options: How to open and configure the connection.
    /// - Throws: ``SQLiteError``: `SQLITE_CANTOPEN` when the file cannot be opened or created,
    ///   `SQLITE_NOTADB` when it is not a database (or its key is wrong), `SQLITE_BUSY` when it is
    ///   locked longer than the busy timeout.
    public init(path: String, options: Options = Options()) throws {
        Self.turnOffMemoryStatistics()
        var flags = options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if options.create && !options.readOnly {
            flags |= SQLITE_OPEN_CREATE
        }
        flags |= SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
        flags |= options.threadingMode == .serialized ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX

        let (opened, code) =
            if let key = options.encryptionKey {
                try Self.openEncrypted(path: path, flags: flags, key: key)
            } else {
                Self.openPlain(path: path, flags: flags)
            }
        guard let pointer = opened else {
            throw SQLiteError(.noMemory, message: "cannot allocate a database connection")
        }
        do {
            try SQLiteError.check(code, database: pointer)
            try SQLiteError.check(sqlite3_extended_result_codes(pointer, 1), database: pointer)
            try SQLiteError.check(
                sqlite3_busy_timeout(pointer, Self.milliseconds(options.busyTimeout)), database: pointer)
            if options.encryptionKey != nil { try Self.prepareEncrypted(pointer) }
        } catch {
            sqlite3_close_v2(pointer)
            throw error
        }

        self.path = path
        self.options = options
        self.database = DatabaseHandle(pointer)
        // From here, a throw runs deinit, which closes the handle.
        try configure()
    }

    deinit {
        close()
    }

    /// Closes the connection: finalizes the cached statements and closes the handle with
    /// `sqlite3_close_v2`. Calling it again does nothing.
    ///
    /// Statements made with ``makeStatement(sql:)`` that are still alive keep SQLite's memory
    /// until they are released; they throw ``SQLiteError/connectionClosed(sql:)`` when used.
    public func close() {
        database.withLock {
            for statement in statementCache.values {
                statement.finalize()
            }
            statementCache.removeAll()
            database.close()
        }
    }

    /// Whether ``close()`` has run.
    public var isClosed: Bool {
        !database.isOpen
    }

    /// Whether SQLite guards the handle with a mutex of its own (``ThreadingMode/serialized``):
    /// `sqlite3_db_mutex` is NULL in ``ThreadingMode/multiThread``.
    var hasSQLiteMutex: Bool {
        (try? database.withOpenHandle { sqlite3_db_mutex($0) != nil }) ?? false
    }

    /// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`) for the whole process: with
    /// them on, every allocation SQLite makes locks one global mutex to count it (SQLite recommends
    /// building with them off; ~6 % of an update's time here). `sqlite3_memory_used` and the soft
    /// heap limit then no longer work. Only possible before SQLite initializes: the first
    /// ``init(path:options:)`` calls it, so it takes effect unless other code in the process
    /// opened a database first.
    ///
    /// - Returns: Whether the statistics are off: false when SQLite was already initialized with
    ///   them on.
    @discardableResult
    public static func turnOffMemoryStatistics() -> Bool {
        memoryStatisticsOff
    }

    private static let memoryStatisticsOff: Bool = couchette_sqlite_memory_statistics_off() == SQLITE_OK

    /// Runs `body` while holding the connection's lock, so that no other thread uses the
    /// connection in the meantime.
    ///
    /// - Parameters:
    ///   - body: The work to do; it receives this connection.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withExclusiveAccess<T>(_ body: (Connection) throws -> T) rethrows -> T {
        try database.withLock { try body(self) }
    }

    // MARK: - Configuration

    /// Applies journal mode and foreign keys, then reads the schema.
    private func configure() throws {
        if let journalMode = options.journalMode, !options.readOnly {
            // Returns the resulting mode; in-memory databases stay in "memory" mode.
            _ = try makeStatement(sql: "PRAGMA journal_mode = \(journalMode.rawValue)").rows()
        }
        try execute("PRAGMA foreign_keys = \(options.foreignKeys ? "ON" : "OFF")")
        _ = try makeStatement(sql: "SELECT 1 FROM sqlite_master LIMIT 1").rows()
    }

    /// Converts a duration to whole milliseconds, clamped to `Int32`.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds))
    }
}
