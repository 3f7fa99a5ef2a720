import CouchetteCore
import CouchetteSQLite

// MARK: - StorageSchema

/// The tables of ``SQLiteGatewayStorage`` and the migrations from older versions of them.
///
/// - Version 1: documents, a `channel_membership` table keyed by document, principals, sessions.
/// - Version 2: a `grants` table keyed by document.
/// - Version 3: `channel_changes` and `grants` keyed by channel or principal then sequence (``ChannelIndex``,
///   ``GrantIndex``); documents' metadata records the sequences of their grants and of channels they left.
/// - Version 4: `served_channels` and `served_users`: the channels each user's revocation-aware feeds have served,
///   when each was revoked, and when the user's feeds last served them (``GatewayStorage/noteServedChannels(_:of:at:)``).
/// - Version 5: `channel_changes` indexed by sequence too, for feeds of users with many channels
///   (``ChannelIndex/changesBySequence(inChannels:since:limit:_:)``).
/// - Version 6: `documents.expiry` (Unix seconds, NULL when the document does not expire), indexed where set, for the
///   sweep that purges expired documents (``GatewayStorage/expiredDocumentIDs(at:limit:)``).
/// - Version 7: `channel_changes` indexed by channel and document, for a user's `_all_docs` pages in ID order
///   (``ChannelIndex/liveDocumentIDs(inChannels:in:limit:_:)``).
enum StorageSchema {
    /// The version this code writes.
    static let version: Int32 = 7

    /// The index of version 6.
    static let expiryIndex = "CREATE INDEX documents_by_expiry ON documents (expiry) WHERE expiry IS NOT NULL"

    /// The table of version 4.
    static let servedChannels = """
        CREATE TABLE served_channels (
            user TEXT NOT NULL,
            channel TEXT NOT NULL,
            served_through INTEGER,
            revoked INTEGER,
            PRIMARY KEY (user, channel)
        ) WITHOUT ROWID;
        CREATE TABLE served_users (user TEXT PRIMARY KEY, last_served INTEGER NOT NULL) WITHOUT ROWID;
        """

    /// Creates the tables in an empty database, or brings an older database to ``version``.
    ///
    /// - Throws: 500 for a database written by a newer gateway; SQLite's errors.
    static func migrate(_ connection: Connection) throws {
        let found = try connection.userVersion
        if found > version { throw GatewayError.internalError("The database was written by a newer gateway") }
        if found == version { return }
        try connection.transaction { connection in
            if found == 0 {
                try create(connection)
            } else {
                if found < 3 { try migrateToVersion3(from: found, connection) }
                if found < 4 { try connection.execute(servedChannels) }
                try connection.execute(ChannelIndex.createSequenceIndex)
                if found < 6 { try migrateToVersion6(connection) }
                try connection.execute(ChannelIndex.createDocumentIndex)
            }
            try connection.setUserVersion(version)
        }
    }

    private static func create(_ connection: Connection) throws {
        try connection.execute(
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value);
            CREATE TABLE documents (
                sequence INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                deleted INTEGER NOT NULL,
                rev TEXT NOT NULL,
                body BLOB NOT NULL,
                metadata BLOB NOT NULL,
                expiry REAL
            );
            CREATE TABLE local_documents (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body BLOB NOT NULL);
            CREATE TABLE attachments (digest TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE users (name TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE roles (name TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT NOT NULL, data BLOB NOT NULL);
            CREATE INDEX sessions_by_user ON sessions (user);
            """)
        try connection.execute(ChannelIndex.createTable)
        try connection.execute(ChannelIndex.createSequenceIndex)
        try connection.execute(ChannelIndex.createDocumentIndex)
        try connection.execute(GrantIndex.createTable)
        try connection.execute(servedChannels)
        try connection.execute(expiryIndex)
    }

    /// Version 5 to 6: the expiry column, filled from the metadata of documents that have one.
    private static func migrateToVersion6(_ connection: Connection) throws {
        try connection.execute("ALTER TABLE documents ADD COLUMN expiry REAL")
        var expiries: [(sequence: Int64, expiry: Double)] = []
        try connection.forEachRow("SELECT sequence, metadata FROM documents WHERE instr(metadata, '\"exp\"') > 0") { row in
            if let seconds = try JSONValue(parsing: row.blob(at: 1))["exp"]?.doubleValue {
                expiries.append((row.int64(at: 0), seconds))
            }
        }
        for (sequence, expiry) in expiries {
            try connection.execute("UPDATE documents SET expiry = ? WHERE sequence = ?", expiry, sequence)
        }
        try connection.execute(expiryIndex)
    }

    /// Versions 1 and 2 to 3: the sequences of channels left (from `channel_membership`) and of grants (from
    /// version 2's `grants`; the document's sequence before) move into each document's metadata, and the new
    /// tables are filled from the documents.
    private static func migrateToVersion3(from found: Int32, _ connection: Connection) throws {
        var removals: [String: [String: UInt64]] = [:]
        try connection.forEachRow("SELECT doc_id, channel, sequence FROM channel_membership WHERE removed = 1") { row in
            removals[row.string(at: 0), default: [:]][row.string(at: 1)] = UInt64(row.int64(at: 2))
        }
        var grantSequences: [String: [DocumentGrant: UInt64]] = [:]
        if found >= 2 {
            try connection.forEachRow("SELECT doc_id, kind, principal, target, sequence FROM grants") { row in
                let grant = DocumentGrant(
                    kind: DocumentGrant.Kind(rawValue: row.int(at: 1)) ?? .channel, principal: row.string(at: 2),
                    target: row.string(at: 3))
                grantSequences[row.string(at: 0), default: [:]][grant] = UInt64(row.int64(at: 4))
            }
        }
        try connection.execute("DROP TABLE channel_membership; DROP TABLE IF EXISTS grants;")
        try connection.execute(ChannelIndex.createTable)
        try connection.execute(GrantIndex.createTable)
        var documents: [StoredDocument] = []
        try connection.forEachRow("SELECT id, sequence, body, metadata FROM documents") { row in
            var document = try StoredDocumentCodec.decode(
                id: row.string(at: 0), sequence: UInt64(row.int64(at: 1)), winnerBody: row.blob(at: 2),
                metadata: row.blob(at: 3))
            document.channelRemovals = removals[document.id] ?? [:]
            for (grant, sequence) in grantSequences[document.id] ?? [:] where document.grantSequences[grant] != nil {
                document.grantSequences[grant] = sequence
            }
            documents.append(document)
        }
        for document in documents {
            try connection.execute("UPDATE documents SET metadata = ? WHERE sequence = ?") { statement in
                try statement.bind(StoredDocumentCodec.encodeMetadata(document), at: 1)
                try statement.bind(Int64(document.sequence), at: 2)
            }
            var changes = IndexChanges()
            changes.recordInsertion(of: document)
            var rows = PendingIndexRows()
            rows.record(changes)
            // A file's tables (a database in memory is never migrated).
            try ChannelIndex.write(rows, connection)
            try GrantIndex.write(rows, connection)
        }
    }
}
