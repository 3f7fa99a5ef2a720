import CouchetteSQLite
import Synchronization

/// The versions of a database file's schema, kept in `PRAGMA user_version`.
///
/// Opening a file migrates it step by step from its version to ``current``; a file from a newer version of
/// Couchette is refused rather than misread.
enum Schema {
    /// The version this build writes.
    static let current: Int32 = 5

    /// Migrates `connection` to ``current`` (creates the schema in a new file).
    ///
    /// - Parameter upgrading: Whether a file of an older schema may be upgraded.
    /// - Throws: `.unsupported` (501) for a newer schema, or an older one when not `upgrading`; the SQLite error of
    ///   a failed step (rolled back).
    static func migrate(_ connection: Connection, upgrading: Bool = true) throws {
        let version = try connection.userVersion
        if version > current {
            throw CouchetteError(
                .unsupported,
                message: "The database was written by a newer Couchette (schema \(version); this build reads up to \(current))")
        }
        guard version < current else { return }
        if version > 0 && !upgrading {
            throw CouchetteError(
                .unsupported,
                message: "The database is in an older format (schema \(version)); opening it upgrades it to schema "
                    + "\(current), which older versions cannot read. Allow the upgrade to open it (couchette --upgrade).")
        }
        try connection.transaction { connection in
            if version < 1 { try createVersion1(connection) }
            if version < 2 { try upgradeToVersion2(connection) }
            if version < 3 { try upgradeToVersion3(connection) }
            if version < 4 { try upgradeToVersion4(connection) }
            if version < 5 { try upgradeToVersion5(connection) }
            Schema.reached("migrated")
            try connection.setUserVersion(current)
        }
    }

    /// Version 1: metadata, collections, documents with their revision trees, local documents.
    ///
    /// A document's row is keyed by its sequence (the rowid), so saves append to the table and the changes
    /// feed reads it in order; a unique index finds documents by collection and ID.
    static func createVersion1(_ connection: Connection) throws {
        try connection.execute(
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB);
            CREATE TABLE collections (
                id INTEGER PRIMARY KEY,
                scope TEXT NOT NULL,
                name TEXT NOT NULL,
                last_sequence INTEGER NOT NULL DEFAULT 0,
                UNIQUE (scope, name)
            );
            CREATE TABLE documents (
                sequence INTEGER PRIMARY KEY,
                collection INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                doc_id TEXT NOT NULL,
                flags INTEGER NOT NULL,
                rev TEXT NOT NULL,
                body BLOB NOT NULL,
                tree BLOB NOT NULL,
                expiration REAL,
                UNIQUE (collection, doc_id)
            );
            CREATE TABLE local_documents (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body BLOB NOT NULL);
            INSERT INTO collections (id, scope, name) VALUES (1, '_default', '_default');
            """)
    }

    /// Version 2: an index of documents that expire, so the expiry sweep does not scan every document.
    static func upgradeToVersion2(_ connection: Connection) throws {
        try connection.execute(
            "CREATE INDEX documents_by_expiration ON documents (expiration) WHERE expiration IS NOT NULL")
    }

    /// Version 3: map/reduce views. A view's rows are keyed by the collation bytes of their key
    /// (``JSONCollation``), so key ranges and ordering are plain index scans; the key and value stay as JSON text.
    static func upgradeToVersion3(_ connection: Connection) throws {
        try connection.execute(
            """
            CREATE TABLE views (
                id INTEGER PRIMARY KEY,
                collection INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                version TEXT NOT NULL,
                last_sequence INTEGER NOT NULL DEFAULT 0,
                UNIQUE (collection, name)
            );
            CREATE TABLE view_rows (
                view INTEGER NOT NULL REFERENCES views(id) ON DELETE CASCADE,
                sort_key BLOB NOT NULL,
                doc_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                key TEXT NOT NULL,
                value TEXT
            );
            CREATE INDEX view_rows_by_key ON view_rows (view, sort_key, doc_id);
            CREATE INDEX view_rows_by_document ON view_rows (view, doc_id);
            """)
    }

    /// Version 4: when each document's row was last written by a save or a replicated revision (seconds since
    /// 1970), for ``Document/timestamp``; rows written before it have none.
    static func upgradeToVersion4(_ connection: Connection) throws {
        try connection.execute("ALTER TABLE documents ADD COLUMN modified REAL")
    }

    /// Version 5: documents keep their row. The rowid becomes a stable `id` and the sequence an indexed column, so
    /// an update rewrites the row in place instead of moving it to the end of the table (and its index entries
    /// with it). The table is rebuilt (SQLite cannot change a primary key) with the rows' old rowids as their ids;
    /// the indexes and triggers on it (the expiry index, value indexes, full-text triggers) are made again from
    /// their stored SQL. In the migration's one transaction: a crash leaves the file at version 4.
    static func upgradeToVersion5(_ connection: Connection) throws {
        let dependents = try connection.query(
            """
            SELECT sql FROM sqlite_master WHERE tbl_name = 'documents' AND type IN ('index', 'trigger') AND sql IS NOT NULL
                AND name != 'documents_by_sequence' ORDER BY type, name
            """
        ).compactMap { $0[0].stringValue }
        try connection.execute(
            """
            CREATE TABLE documents_v5 (
                id INTEGER PRIMARY KEY,
                sequence INTEGER NOT NULL,
                collection INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                doc_id TEXT NOT NULL,
                flags INTEGER NOT NULL,
                rev TEXT NOT NULL,
                body BLOB NOT NULL,
                tree BLOB NOT NULL,
                expiration REAL,
                modified REAL,
                UNIQUE (collection, doc_id)
            );
            INSERT INTO documents_v5 (id, sequence, collection, doc_id, flags, rev, body, tree, expiration, modified)
                SELECT sequence, sequence, collection, doc_id, flags, rev, body, tree, expiration, modified FROM documents;
            """)
        Schema.reached("copied")
        try connection.execute(
            """
            DROP TABLE documents;
            ALTER TABLE documents_v5 RENAME TO documents;
            CREATE UNIQUE INDEX documents_by_sequence ON documents (sequence);
            """)
        for sql in dependents { try connection.execute(sql) }
    }

    /// Tells a crash test each step a migration completes (see ``observeMigrationSteps(_:)``).
    static func reached(_ step: String) {
        stepObserver.withLock { $0 }?(step)
    }

    private static let stepObserver = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Calls `observer` with each step a migration completes, inside its transaction, so that a crash test can
    /// end the process there.
    static func observeMigrationSteps(_ observer: (@Sendable (String) -> Void)?) {
        stepObserver.withLock { $0 = observer }
    }
}
