// MARK: - PostgresSchema

/// The tables of ``PostgresGatewayStorage``, in a PostgreSQL schema of their own per gateway database.
///
/// The same tables as ``StorageSchema`` (SQLite), plus the PostgreSQL `SEQUENCE` every document write and
/// principal change takes its sequences from, and the two functions that make feeds safe without a lock between
/// writers: `take_sequences` and `stable_sequence` (``PostgresSequencer``; docs/decisions.md, "Sequences across
/// nodes without a lock"). Text keys use the `C` collation, so `_all_docs` orders IDs by their bytes, as SQLite does.
/// Nodes starting together create the tables once: creation runs under a transaction-scoped advisory lock.
///
/// - Version 1: sequences from a `counter` row locked by every write transaction.
/// - Version 2: this layout (`documents.expiry` in Unix seconds, NULL when the document does not expire); the
///   counter's value moves to `document_sequence` and the table is dropped.
enum PostgresSchema {
    /// The version this code writes.
    static let version = 2

    private static let tables = [
        "CREATE TABLE IF NOT EXISTS meta (key TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE SEQUENCE IF NOT EXISTS document_sequence AS BIGINT MINVALUE 1 CACHE 1",
        """
        CREATE TABLE IF NOT EXISTS documents (
            id TEXT COLLATE "C" PRIMARY KEY,
            sequence BIGINT NOT NULL UNIQUE,
            deleted BOOLEAN NOT NULL,
            rev TEXT NOT NULL,
            body BYTEA NOT NULL,
            metadata BYTEA NOT NULL,
            expiry DOUBLE PRECISION
        )
        """,
        "CREATE INDEX IF NOT EXISTS documents_by_expiry ON documents (expiry) WHERE expiry IS NOT NULL",
        """
        CREATE TABLE IF NOT EXISTS channel_changes (
            channel TEXT COLLATE "C" NOT NULL,
            sequence BIGINT NOT NULL,
            doc_id TEXT COLLATE "C" NOT NULL,
            removed BOOLEAN NOT NULL,
            PRIMARY KEY (channel, sequence)
        )
        """,
        "CREATE INDEX IF NOT EXISTS channel_changes_by_sequence ON channel_changes (sequence)",
        "CREATE INDEX IF NOT EXISTS channel_changes_by_document ON channel_changes (channel, doc_id)",
        """
        CREATE TABLE IF NOT EXISTS grants (
            principal TEXT COLLATE "C" NOT NULL,
            kind SMALLINT NOT NULL,
            sequence BIGINT NOT NULL,
            target TEXT COLLATE "C" NOT NULL,
            doc_id TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (principal, kind, sequence, target)
        )
        """,
        "CREATE TABLE IF NOT EXISTS local_documents (id TEXT COLLATE \"C\" PRIMARY KEY, rev TEXT NOT NULL, body BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS attachments (digest TEXT COLLATE \"C\" PRIMARY KEY, data BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS users (name TEXT COLLATE \"C\" PRIMARY KEY, data BYTEA NOT NULL)",
        "CREATE TABLE IF NOT EXISTS roles (name TEXT COLLATE \"C\" PRIMARY KEY, data BYTEA NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS sessions (
            id TEXT COLLATE "C" PRIMARY KEY, username TEXT COLLATE "C" NOT NULL, data BYTEA NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (username)",
        """
        CREATE TABLE IF NOT EXISTS served_channels (
            username TEXT COLLATE "C" NOT NULL,
            channel TEXT COLLATE "C" NOT NULL,
            served_through BIGINT,
            revoked BIGINT,
            PRIMARY KEY (username, channel)
        )
        """,
        "CREATE TABLE IF NOT EXISTS served_users (username TEXT COLLATE \"C\" PRIMARY KEY, last_served BIGINT NOT NULL)",
        "INSERT INTO meta (key, value) VALUES ('settings_version', '0') ON CONFLICT DO NOTHING",
        "INSERT INTO meta (key, value) VALUES ('uuid', md5(random()::text || clock_timestamp()::text)) ON CONFLICT DO NOTHING",
    ]

    /// Creates the schema and its tables if missing.
    ///
    /// - Throws: 500 for tables written by a newer gateway; 503 when PostgreSQL cannot be reached.
    static func migrate(schema: String, _ pool: PostgresConnectionPool) throws(GatewayError) {
        try pool.transaction { link, _ throws(GatewayError) in
            try link.query("SELECT pg_advisory_xact_lock(hashtext(\(schema)))")
            try link.execute("CREATE SCHEMA IF NOT EXISTS \(PostgresLink.quoted(schema))")
            for statement in tables { try link.execute(statement) }
            let found = try link.query("SELECT value FROM meta WHERE key = 'schema_version'").rows.first
            let foundVersion = try found.map { row throws(GatewayError) in
                Int(try PostgresLink.decode(row, as: (String).self)) ?? 0
            }
            if let foundVersion, foundVersion > version {
                throw .internalError("The PostgreSQL schema \(schema) was written by a newer gateway")
            }
            if let foundVersion, foundVersion < 2 {
                // Version 1 counted in a row: the sequence goes on from its value.
                try link.execute(
                    "SELECT setval('document_sequence', last) FROM counter WHERE id = 1 AND last > 0")
                try link.execute("DROP TABLE counter")
            }
            for statement in PostgresSequencer.functions + [PostgresDocumentWriter.function]
                + PostgresDocumentTotals.statements(schema: schema)
            {
                try link.execute(statement)
            }
            let triggers = try link.strings(
                "SELECT tgname::text FROM pg_trigger WHERE tgrelid = \(PostgresLink.quoted(schema) + ".documents")::regclass"
            )
            for (name, statement) in PostgresDocumentTotals.triggers where !triggers.contains(name) {
                try link.execute(statement)
            }
            try link.execute(PostgresDocumentTotals.firstCount)
            try link.query("INSERT INTO meta (key, value) VALUES ('schema_version', \(String(version))) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        }
    }
}
