import CouchetteCore
import CouchetteSQLite
import Foundation

/// One SQLite connection to a database's file: the only code that runs SQL. The writer's callers hold the
/// database's lock; readers (``ReaderPool``) are used by one read at a time. Either way one thread at a time uses
/// a connection, statements and column reads included, so connections are opened in SQLite's multi-thread mode
/// (no mutex of SQLite's own).
///
/// Storage never interprets bodies beyond the revision tree: a ``DocumentRecord`` is key, body, tree,
/// sequence, flags and expiration.
final class DatabaseStorage {
    /// The SQLite connection; only this type and its extensions in `Storage/` use it.
    let connection: Connection

    /// Opens (creating if allowed) the SQLite file and migrates its schema.
    ///
    /// - Throws: `.notFound` when missing and `create` is false, `.wrongEncryptionKey` (401) when the file is
    ///   not a database, `.unsupported` for a newer schema.
    init(path: String, options config: StorageOptions) throws {
        let options = Connection.Options(
            readOnly: config.readOnly, create: config.create && !config.readOnly,
            journalMode: config.readOnly ? nil : .wal, encryptionKey: config.key, threadingMode: .multiThread)
        do {
            connection = try Connection(path: path, options: options)
            try connection.execute("PRAGMA synchronous = \(config.fullSync ? "FULL" : "NORMAL")")
            try connection.execute("PRAGMA wal_autocheckpoint = \(config.key != nil ? Self.encryptedCheckpointPages : 4_000)")
            try Self.prepare(connection, config)
            if config.readOnly {
                // Versions 3 and 4 read as they are: 4 only added `documents.modified` (a view supplies it for 3), 5
                // only made the sequence an indexed column.
                guard try [3, 4, Schema.current].contains(connection.userVersion) else {
                    throw CouchetteError(.forbidden, message: "A read-only database cannot be migrated")
                }
            } else {
                try Schema.migrate(connection, upgrading: config.upgradesFormat)
            }
        } catch {
            throw DatabaseStorage.translate(error)
        }
    }

    /// Opens a read connection to the file a writer has open (and migrated): no schema change, and every write
    /// refused (`PRAGMA query_only`). See ``ReaderPool``.
    init(readerOf path: String, options config: StorageOptions) throws {
        let options = Connection.Options(
            readOnly: config.readOnly, create: false, journalMode: nil, encryptionKey: config.key,
            threadingMode: .multiThread)
        do {
            connection = try Connection(path: path, options: options)
            try Self.prepare(connection, config)
            try connection.execute("PRAGMA query_only = ON")
        } catch {
            throw DatabaseStorage.translate(error)
        }
    }

    /// What every connection to the file needs, writer or reader: the mapping as configured (``mappedBytes``),
    /// case-sensitive LIKE (SQL++'s), the SQL functions, a large page cache when encrypted (a page read costs an
    /// HMAC-SHA512 and an AES decryption: keep more of them), and for a read-only file of version 3 the `modified`
    /// column of version 4.
    private static func prepare(_ connection: Connection, _ config: StorageOptions) throws {
        try connection.execute("PRAGMA mmap_size = \(config.mmapEnabled ? mappedBytes : 0)")
        try connection.execute("PRAGMA case_sensitive_like = ON")
        try SQLFunctions.register(on: connection)
        if config.key != nil { try connection.execute("PRAGMA cache_size = -\(encryptedCacheKibibytes)") }
        if config.readOnly, try connection.userVersion == 3 {
            try connection.execute("CREATE TEMP VIEW documents AS SELECT *, NULL AS modified FROM main.documents")
        }
    }

    /// How much of a plain file SQLite may memory-map (``DatabaseConfiguration/mmapEnabled``): SQLite's own
    /// default is none, so each page read outside its cache was a `pread` call — 7 % of the update pass's time. An
    /// encrypted file is never mapped (its io methods are version 2).
    static let mappedBytes = 256 << 20
    /// The page cache of an encrypted database, in KiB (SQLite's default is 2,000).
    static let encryptedCacheKibibytes = 65_536
    /// WAL pages between automatic checkpoints of an encrypted database (SQLite's default is 1,000).
    static let encryptedCheckpointPages = 8_000

    func close() {
        connection.close()
    }

    /// Opens the SQLite file at `path` with `key` and runs `PRAGMA quick_check`.
    ///
    /// - Returns: The file's page key (nil when plain).
    /// - Throws: `.corrupt` when the check finds a problem; what opening throws.
    @discardableResult
    static func check(path: String, key: Connection.EncryptionKey?) throws -> [UInt8]? {
        let connection = try Connection(
            path: path, options: Connection.Options(create: false, journalMode: nil, encryptionKey: key))
        defer { connection.close() }
        let result = try connection.firstValue("PRAGMA quick_check")?.stringValue
        guard result == "ok" else {
            throw CouchetteError(.corrupt, message: "The re-keyed copy failed its check: \(result ?? "nothing")")
        }
        return try connection.pageKey()
    }

    // MARK: - Transactions

    /// `BEGIN IMMEDIATE`, from a cached statement.
    func begin() throws {
        let statement = try connection.cachedStatement(sql: "BEGIN IMMEDIATE")
        try statement.execute()
    }

    /// `COMMIT`, from a cached statement.
    func commit() throws {
        let statement = try connection.cachedStatement(sql: "COMMIT")
        try statement.execute()
    }

    /// Starts a read transaction: the reads until ``endRead()`` see one snapshot of the file.
    func beginRead() throws {
        try connection.cachedStatement(sql: "BEGIN DEFERRED").execute()
    }

    /// Ends the read transaction ``beginRead()`` started.
    func endRead() {
        if let statement = try? connection.cachedStatement(sql: "COMMIT") {
            if (try? statement.execute()) == nil { try? connection.execute("ROLLBACK") }
        }
    }

    /// `ROLLBACK`, ignoring errors (SQLite may already have rolled back).
    func rollBack() {
        try? connection.execute("ROLLBACK")
    }

    /// Maps SQLite errors onto ``CouchetteError``: the status is SQLite's one mapping (`SQLiteError.status`, which
    /// the gateway answers with too), the code names it.
    static func translate(_ error: any Error) -> CouchetteError {
        if let error = error as? CouchetteError { return error }
        guard let error = error as? SQLiteError else {
            return CouchetteError(.io, message: String(describing: error))
        }
        switch error.primaryCode {
        case .notADatabase: return CouchetteError(.wrongEncryptionKey, message: "The file is not a database, or the key is wrong")
        case .corrupt: return CouchetteError(.corrupt, message: error.message)
        case .misuse: return CouchetteError(.notOpen, message: error.message)
        case .readOnly: return CouchetteError(.forbidden, message: "The database is read-only")
        case .cantOpen: return CouchetteError(.notFound, message: "Cannot open the database file")
        default:
            let code: CouchetteError.Code =
                switch error.status {
                case 409: .conflict
                case 503: .busy
                case 403: .forbidden
                case 413: .badInput
                default: .io
                }
            return CouchetteError(code, message: code == .io ? error.description : error.message, status: error.status)
        }
    }

    /// Runs `body`, translating SQLite errors.
    @inline(__always)
    func run<T>(_ body: () throws -> T) throws(CouchetteError) -> T {
        do { return try body() } catch { throw DatabaseStorage.translate(error) }
    }

    // MARK: - Metadata

    func metaValue(_ key: String) throws(CouchetteError) -> String? {
        try run { try connection.firstValue("SELECT value FROM meta WHERE key = ?", key)?.stringValue }
    }

    func setMetaValue(_ key: String, _ value: String) throws(CouchetteError) {
        try run { try connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value) }
    }

    // MARK: - Collections

    struct CollectionRow: Sendable, Hashable {
        var id: Int64
        var scope: String
        var name: String
        var lastSequence: UInt64
    }

    func collectionRows() throws(CouchetteError) -> [CollectionRow] {
        try run {
            try connection.query(
                """
                SELECT id, scope, name,
                    max(last_sequence, coalesce((
                        SELECT max(sequence) FROM documents WHERE collection = id AND sequence > last_sequence), 0))
                FROM collections ORDER BY scope, name
                """
            ).map {
                CollectionRow(
                    id: $0[0].int64Value ?? 0, scope: $0[1].stringValue ?? "", name: $0[2].stringValue ?? "",
                    lastSequence: UInt64($0[3].int64Value ?? 0))
            }
        }
    }

    /// The highest sequence ever given out: the last row's, or a higher one saved before a purge.
    func databaseLastSequence() throws(CouchetteError) -> UInt64 {
        try run {
            UInt64(
                try connection.firstValue(
                    """
                    SELECT max(coalesce((SELECT max(sequence) FROM documents), 0),
                               coalesce((SELECT max(last_sequence) FROM collections), 0))
                    """)?.int64Value ?? 0)
        }
    }

    func insertCollection(scope: String, name: String) throws(CouchetteError) -> Int64 {
        try run {
            try connection.execute("INSERT INTO collections (scope, name) VALUES (?, ?)", scope, name)
            return try connection.lastInsertRowID
        }
    }

    func deleteCollection(id: Int64) throws(CouchetteError) {
        try run {
            try connection.execute("DELETE FROM documents WHERE collection = ?", id)
            try connection.execute("DELETE FROM collections WHERE id = ?", id)
        }
    }

    func setLastSequence(_ sequence: UInt64, collectionID: Int64) throws(CouchetteError) {
        try run {
            try connection.execute(
                "UPDATE collections SET last_sequence = ? WHERE id = ?", Int64(sequence), collectionID)
        }
    }

    // MARK: - Documents

    static let selectColumns = "sequence, flags, rev, body, expiration, modified"
    /// How many columns ``selectColumns`` names.
    static let selectColumnCount = 6

    /// A record (no tree) from the ``selectColumns`` of `row`, starting at column `offset`.
    static func record(
        _ row: Statement, at offset: Int, collectionID: Int64, documentID: String
    ) -> DocumentRecord {
        DocumentRecord(
            collectionID: collectionID, documentID: documentID, sequence: UInt64(row.int64(at: offset)),
            flags: DocumentRecordFlags(rawValue: row.int64(at: offset + 1)), revisionID: row.string(at: offset + 2),
            body: row.blob(at: offset + 3), tree: nil,
            expiration: row.isNull(at: offset + 4) ? nil : row.double(at: offset + 4),
            modified: row.isNull(at: offset + 5) ? nil : row.double(at: offset + 5))
    }

    /// Reads a document; the revision tree too when `withTree`.
    ///
    /// - Parameter parseWinnerBody: Put the current revision's parsed body into the tree's winner (the
    ///   revision APIs need it); saves leave it out and use the row's bytes, and leave the other bodies the tree
    ///   keeps unparsed too (``DocumentRecord/treeBodies``).
    /// - Parameter decodeTree: Decode the tree; when false it comes as its bytes (``DocumentRecord/encodedTree``),
    ///   for a save that may only append to it (``RevisionTreeCodec/LinearHistory``).
    func document(
        collectionID: Int64, id: String, withTree: Bool, parseWinnerBody: Bool = true, decodeTree: Bool = true
    ) throws(CouchetteError) -> DocumentRecord? {
        let found: (DocumentRecord, [UInt8]?)? = try run {
            let statement = try connection.cachedStatement(withTree ? Self.selectDocumentWithTree : Self.selectDocument)
            defer { statement.reset() }
            try statement.bind(collectionID, at: 1)
            try statement.bind(id, at: 2)
            guard try statement.step() else { return nil }
            let record = DatabaseStorage.record(statement, at: 0, collectionID: collectionID, documentID: id)
            return (record, withTree ? statement.blob(at: DatabaseStorage.selectColumnCount) : nil)
        }
        guard case (var record, let treeBytes)? = found else { return nil }
        if let treeBytes, !decodeTree {
            record.encodedTree = treeBytes
        } else if let treeBytes, parseWinnerBody {
            record.tree = try RevisionTreeCodec.decode(treeBytes, winnerBody: try? JSONValue(parsing: record.body))
        } else if let treeBytes {
            (record.tree, record.treeBodies) = try RevisionTreeCodec.decodeKeepingBodiesRaw(treeBytes)
        }
        return record
    }

    // The statements of the most frequent calls, found in the statement cache by their key rather than by hashing
    // their text (with `toMutable` taking one lock instead of five: the update pass ~9 % faster).
    private static let selectDocument = StatementKey(
        "SELECT \(selectColumns) FROM documents WHERE collection = ? AND doc_id = ?")
    private static let selectDocumentWithTree = StatementKey(
        "SELECT \(selectColumns), tree FROM documents WHERE collection = ? AND doc_id = ?")
    private static let insertText = """
        INSERT INTO documents (sequence, flags, rev, body, tree, expiration, modified, collection, doc_id)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let insertDocument = StatementKey(insertText)
    private static let insertDocumentIfAbsent = StatementKey(
        insertText.replacingOccurrences(of: "INSERT", with: "INSERT OR IGNORE"))
    private static let updateDocument = StatementKey("""
        UPDATE documents SET sequence = ?, flags = ?, rev = ?, body = ?, tree = ?, expiration = ?, modified = ?
        WHERE collection = ? AND doc_id = ?
        """)
    /// The row found by its sequence (`+` keeps SQLite off the document ID index): a descent of the integer index
    /// instead of the text keys' (the update pass of `lite.update.batched`: 2.8–3.2 → 2.3–2.4 s).
    private static let updateDocumentIfUnchanged = StatementKey("""
        UPDATE documents SET sequence = ?, flags = ?, rev = ?, body = ?, tree = ?, modified = ?
        WHERE +collection = ? AND +doc_id = ? AND sequence = ? AND tree = ?
        """)

    /// How ``write(_:mode:)`` writes a row.
    enum WriteMode {
        /// A new row (the document does not exist).
        case insert
        /// Replace the existing row in place.
        case update
        /// A new row unless the document exists, in which case nothing is written.
        case insertIfAbsent
        /// Replace the existing row in place if it still has this sequence and tree (else nothing is written),
        /// leaving its expiration as it is.
        case updateIfUnchanged(sequence: UInt64, tree: [UInt8])
    }

    /// Writes a document row; `record.tree` must be set, unless the tree comes `encodedTree`.
    ///
    /// - Returns: Whether a row was written (false only for `.insertIfAbsent` on an existing document).
    @discardableResult
    func write(
        _ record: DocumentRecord, mode: WriteMode, rawBodies: [RevisionID: [UInt8]] = [:], encodedTree: [UInt8]? = nil
    ) throws(CouchetteError) -> Bool {
        let treeBytes = encodedTree ?? RevisionTreeCodec.encode(record.tree!, rawBodies: rawBodies)
        return try run {
            let key =
                switch mode {
                case .insert: Self.insertDocument
                case .insertIfAbsent: Self.insertDocumentIfAbsent
                case .update: Self.updateDocument
                case .updateIfUnchanged: Self.updateDocumentIfUnchanged
                }
            let statement = try connection.cachedStatement(key)
            defer { statement.reset() }
            var index = 0
            func next() -> Int {
                index += 1
                return index
            }
            try statement.bind(Int64(record.sequence), at: next())
            try statement.bind(record.flags.rawValue, at: next())
            try statement.bind(record.revisionID, at: next())
            try statement.bind(record.body, at: next())
            try statement.bind(treeBytes, at: next())
            let keepsExpiration = if case .updateIfUnchanged = mode { true } else { false }
            if !keepsExpiration {
                if let expiration = record.expiration {
                    try statement.bind(expiration, at: next())
                } else {
                    try statement.bindNull(at: next())
                }
            }
            if let modified = record.modified {
                try statement.bind(modified, at: next())
            } else {
                try statement.bindNull(at: next())
            }
            try statement.bind(record.collectionID, at: next())
            try statement.bind(record.documentID, at: next())
            if case .updateIfUnchanged(let sequence, let tree) = mode {
                try statement.bind(Int64(sequence), at: next())
                try statement.bind(tree, at: next())
            }
            try statement.execute()
            switch mode {
            case .insert, .update: return true
            case .insertIfAbsent, .updateIfUnchanged: return try connection.changes > 0
            }
        }
    }

    /// Removes a document row entirely (purge).
    @discardableResult
    func removeDocument(collectionID: Int64, id: String) throws(CouchetteError) -> Bool {
        try run {
            try connection.execute("DELETE FROM documents WHERE collection = ? AND doc_id = ?", collectionID, id)
            return try connection.changes > 0
        }
    }

    /// The number of documents whose current revision is not deleted.
    func liveDocumentCount(collectionID: Int64) throws(CouchetteError) -> UInt64 {
        try run {
            UInt64(
                try connection.firstValue(
                    "SELECT count(*) FROM documents WHERE collection = ? AND (flags & 1) = 0", collectionID)?
                    .int64Value ?? 0)
        }
    }

    /// Documents changed after `sequence`, in sequence order, each with its leaves other than the current revision
    /// when `withLeaves` (else none).
    func documents(
        collectionID: Int64, since sequence: UInt64, limit: Int?, withLeaves: Bool
    ) throws(CouchetteError) -> [(record: DocumentRecord, otherLeaves: [(revisionID: String, isDeleted: Bool)])] {
        var rows: [(DocumentRecord, [UInt8]?)] = []
        try run {
            let statement = try connection.cachedStatement(
                sql: """
                    SELECT doc_id, \(DatabaseStorage.selectColumns), tree FROM documents
                    WHERE +collection = ? AND sequence > ? ORDER BY sequence LIMIT ?
                    """)
            // `+collection`: a range of the sequence index, not the (collection, doc_id) index and a sort of
            // the whole collection per call.
            try statement.bind(collectionID, at: 1)
            try statement.bind(Int64(sequence), at: 2)
            try statement.bind(Int64(limit ?? -1), at: 3)
            try statement.forEachRow { row in
                let record = DatabaseStorage.record(
                    row, at: 1, collectionID: collectionID, documentID: row.string(at: 0))
                rows.append((record, withLeaves ? row.blob(at: 1 + DatabaseStorage.selectColumnCount) : nil))
            }
        }
        var records: [(record: DocumentRecord, otherLeaves: [(revisionID: String, isDeleted: Bool)])] = []
        records.reserveCapacity(rows.count)
        for (record, treeBytes) in rows {
            let leaves = try treeBytes.map { bytes throws(CouchetteError) in
                try RevisionTreeCodec.otherLeaves(bytes, current: record.revisionID)
            }
            records.append((record, leaves ?? []))
        }
        return records
    }

    /// Every document ID of a collection, in ID order.
    func documentIDs(collectionID: Int64) throws(CouchetteError) -> [String] {
        try run {
            try connection.query("SELECT doc_id FROM documents WHERE collection = ? ORDER BY doc_id", collectionID)
                .compactMap { $0[0].stringValue }
        }
    }

    // MARK: - Expiration

    func setExpiration(_ expiration: Double?, collectionID: Int64, id: String) throws(CouchetteError) -> Bool {
        try run {
            try connection.execute(
                "UPDATE documents SET expiration = ? WHERE collection = ? AND doc_id = ?", expiration, collectionID, id)
            return try connection.changes > 0
        }
    }

    /// Documents whose expiration is at or before `date` (seconds since 1970), as (collection, ID).
    func expiredDocuments(at date: Double) throws(CouchetteError) -> [(collectionID: Int64, id: String)] {
        try run {
            try connection.query(
                "SELECT collection, doc_id FROM documents WHERE expiration IS NOT NULL AND expiration <= ?", date
            ).map { (collectionID: $0[0].int64Value ?? 0, id: $0[1].stringValue ?? "") }
        }
    }

    /// The earliest expiration date of any document, for scheduling the next sweep.
    func nextExpiration() throws(CouchetteError) -> Double? {
        try run {
            try connection.firstValue("SELECT min(expiration) FROM documents WHERE expiration IS NOT NULL")?.doubleValue
        }
    }

    // MARK: - Local documents

    func localDocument(id: String) throws(CouchetteError) -> (revision: String, body: [UInt8])? {
        try run {
            guard let row = try connection.firstRow("SELECT rev, body FROM local_documents WHERE id = ?", id) else {
                return nil
            }
            return (row[0].stringValue ?? "", row[1].blobValue ?? [])
        }
    }

    func putLocalDocument(id: String, revision: String, body: [UInt8]) throws(CouchetteError) {
        try run {
            try connection.execute(
                "INSERT OR REPLACE INTO local_documents (id, rev, body) VALUES (?, ?, ?)", id, revision, body)
        }
    }

    func removeLocalDocument(id: String) throws(CouchetteError) -> Bool {
        try run {
            try connection.execute("DELETE FROM local_documents WHERE id = ?", id)
            return try connection.changes > 0
        }
    }

    // MARK: - Maintenance helpers

    /// Every stored body and tree, for finding referenced blobs and pruning, one row at a time.
    func forEachDocument(_ body: (DocumentRecord) throws -> Void) throws(CouchetteError) {
        let rows: [(DocumentRecord, [UInt8])] = try run {
            try connection.query(
                "SELECT collection, doc_id, sequence, flags, rev, body, expiration, tree, modified FROM documents")
                .map { row in
                    (
                        DocumentRecord(
                            collectionID: row[0].int64Value ?? 0, documentID: row[1].stringValue ?? "",
                            sequence: UInt64(row[2].int64Value ?? 0), flags: DocumentRecordFlags(rawValue: row[3].int64Value ?? 0),
                            revisionID: row[4].stringValue ?? "", body: row[5].blobValue ?? [], tree: nil,
                            expiration: row[6].doubleValue, modified: row[8].doubleValue),
                        row[7].blobValue ?? []
                    )
                }
        }
        for (var record, treeBytes) in rows {
            record.tree = try RevisionTreeCodec.decode(treeBytes, winnerBody: try? JSONValue(parsing: record.body))
            do { try body(record) } catch { throw DatabaseStorage.translate(error) }
        }
    }
}
