// MARK: - Options

extension Connection {
    /// How a ``Connection`` opens and configures its database.
    public struct Options: Sendable, Hashable {
        /// Opens with `SQLITE_OPEN_READONLY`; writes throw `SQLITE_READONLY`. Default `false`.
        public var readOnly: Bool

        /// Creates the file when it does not exist (`SQLITE_OPEN_CREATE`); ignored when read-only.
        /// Default `true`.
        public var create: Bool

        /// The journal mode set at open (`PRAGMA journal_mode`), or `nil` to keep SQLite's.
        /// Default ``JournalMode/wal``; in-memory databases keep their `memory` mode, and
        /// read-only connections are left alone.
        public var journalMode: JournalMode?

        /// How long to retry when the database is locked before throwing `SQLITE_BUSY`
        /// (`sqlite3_busy_timeout`, millisecond precision). Default 5 seconds.
        public var busyTimeout: Duration

        /// Enforces foreign keys (`PRAGMA foreign_keys`). Default `true`.
        public var foreignKeys: Bool

        /// Encrypts the database with this key (SQLCipher 4's format); `nil` for a plain file. A wrong key (or a
        /// key for a plain file, or none for an encrypted one) fails the open with `SQLITE_NOTADB`. Default `nil`.
        public var encryptionKey: EncryptionKey?

        /// Whether SQLite takes a mutex of its own around each call on the connection. Default
        /// ``ThreadingMode/serialized``.
        public var threadingMode: ThreadingMode

        /// Creates options; every parameter has the default documented on its property.
        ///
        /// - Parameters:
        ///   - readOnly: Opens read-only.
        ///   - create: Creates a missing file.
        ///   - journalMode: The journal mode, or `nil` to keep SQLite's.
        ///   - busyTimeout: How long to wait for locks.
        ///   - foreignKeys: Enforces foreign keys.
        ///   - encryptionKey: The key of an encrypted database.
        ///   - threadingMode: Whether SQLite serializes calls on the connection itself.
        public init(
            readOnly: Bool = false,
            create: Bool = true,
            journalMode: JournalMode? = .wal,
            busyTimeout: Duration = .seconds(5),
            foreignKeys: Bool = true,
            encryptionKey: EncryptionKey? = nil,
            threadingMode: ThreadingMode = .serialized
        ) {
            self.readOnly = readOnly
            self.create = create
            self.journalMode = journalMode
            self.busyTimeout = busyTimeout
            self.foreignKeys = foreignKeys
            self.encryptionKey = encryptionKey
            self.threadingMode = threadingMode
        }
    }

    /// How SQLite guards one connection against use from several threads at once. See
    /// <https://www.sqlite.org/threadsafe.html>.
    ///
    /// The connection's own lock serializes running SQL in both modes; the difference is what
    /// happens around it.
    public enum ThreadingMode: Sendable, Hashable {
        /// `SQLITE_OPEN_FULLMUTEX`: SQLite locks the connection's mutex in every call, so a
        /// statement's column getters are safe while another thread steps another statement.
        case serialized
        /// `SQLITE_OPEN_NOMUTEX`: SQLite takes no connection mutex (two fewer lock operations per
        /// bind, step, reset and column read). The caller uses the connection from one thread at a
        /// time, and reads a statement's columns on the thread that stepped it, before another
        /// thread uses the connection: inside ``Connection/withExclusiveAccess(_:)``, or under a
        /// lock of its own.
        case multiThread
    }

    /// An SQLite journal mode. See <https://www.sqlite.org/pragma.html#pragma_journal_mode>.
    public enum JournalMode: String, Sendable, Hashable, CaseIterable {
        /// Rollback journal deleted at the end of each transaction.
        case delete
        /// Rollback journal truncated to zero bytes.
        case truncate
        /// Rollback journal header zeroed.
        case persist
        /// Rollback journal in memory.
        case memory
        /// Write-ahead log: readers and one writer run concurrently.
        case wal
        /// No journal: no atomic rollback.
        case off
    }
}
