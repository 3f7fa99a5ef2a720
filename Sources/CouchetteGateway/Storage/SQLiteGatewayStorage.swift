import CouchetteCore
import CouchetteSQLite
import Foundation

/// ``GatewayStorage`` in SQLite: in memory for `walrus:`, a file per database for `walrus:DIR`, or the
/// given file for `sqlite:PATH`.
///
/// Documents are keyed by their sequence (the rowid), so each change appends and `_changes` reads in order;
/// ``ChannelIndex`` records, per channel, the sequence of each document's last change while in it (or of its
/// leaving it), so channel-filtered feeds are range scans too; ``GrantIndex`` the grants documents make, by
/// principal (in memory, ``MemoryIndex`` holds both instead). Tables and migrations: ``StorageSchema``.
public final class SQLiteGatewayStorage: GatewayStorage, @unchecked Sendable {
    /// Recursive: an ``update(documentID:_:)`` transform may store attachments or read through the storage.
    let lock = NSRecursiveLock()
    /// Users, roles and effective channels as last loaded (only touched under `lock`).
    let principalCache = PrincipalCache()
    private var connection: Connection?
    private var sequence: UInt64 = 0
    /// Whether an ``inBatch(_:)`` transaction is open (only touched under `lock`).
    private var inBatchTransaction = false
    /// A write that failed halfway in the open batch, which must then be rolled back whole.
    private var batchFailure: (any Error)?
    /// The index rows of the open transaction's writes, written just before it commits (only touched under `lock`).
    private var pendingIndexRows = PendingIndexRows()
    /// The channel and grant rows of a database in memory (only touched under `lock`); nil in a file, which keeps
    /// them in its `channel_changes` and `grants` tables.
    private(set) var memoryIndex: MemoryIndex?
    /// The document counts and body bytes, kept by the writes (only touched under `lock`).
    var totals = DocumentTotals()
    /// Read connections beside the writer, so that document reads, feeds and `_all_docs` never wait for a write
    /// in progress (nor a write for them); nil in memory, where there is one connection.
    private let readers: ReaderPool<Connection>?

    /// Opens the storage of database `name` at `location`.
    ///
    /// - Throws: 500 when the file cannot be opened or is not a gateway database.
    public convenience init(location: StorageLocation, databaseName: String) throws(GatewayError) {
        switch location {
        case .memory:
            try self.init(path: ":memory:")
        case .directory(let directory):
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw .internalError("Cannot create \(directory): \(error.localizedDescription)")
            }
            try self.init(path: (directory as NSString).appendingPathComponent("\(databaseName).sqlite3"))
        case .file(let path):
            try self.init(path: path)
        case .postgres:
            throw .internalError("\(location.redacted) is not an SQLite location")
        }
    }

    /// Opens (creating) the SQLite file at `path` (`:memory:` for memory).
    public init(path: String) throws(GatewayError) {
        readers = path == ":memory:" ? nil : Self.readers(of: path)
        do {
            let connection = try Connection(path: path)
            try connection.execute("PRAGMA synchronous = NORMAL")
            // A 64 MiB page cache: indexes keyed by document ID take inserts at random places, which a small
            // cache turns into reads and writes of the whole file.
            try connection.execute("PRAGMA cache_size = -65536")
            // Checkpoint every 8,000 WAL pages (32 MB; SQLite's default is 1,000): a checkpoint writes and syncs
            // each page once however often the commits since touched it, and the random places the ID indexes
            // take inserts at are touched again and again (`_bulk_docs` ingest 0.62 -> 0.9 of the Lite baseline).
            try connection.execute("PRAGMA wal_autocheckpoint = 8000")
            try StorageSchema.migrate(connection)
            self.connection = connection
            if path == ":memory:" { memoryIndex = MemoryIndex() }
            sequence = UInt64(
                try connection.firstValue(
                    "SELECT max(coalesce((SELECT max(sequence) FROM documents), 0), coalesce((SELECT value FROM meta WHERE key = 'last_sequence'), 0))"
                )?.int64Value ?? 0)
        } catch {
            throw Self.translate(error)
        }
    }

    /// Up to four read connections to the file at `path`, opened as first needed (after the writer has migrated it).
    private static func readers(of path: String) -> ReaderPool<Connection> {
        ReaderPool(
            open: {
                let connection = try Connection(
                    path: path, options: Connection.Options(create: false, journalMode: nil, threadingMode: .multiThread))
                try connection.execute("PRAGMA query_only = ON")
                try connection.execute("PRAGMA cache_size = -16384")
                return connection
            },
            begin: { try $0.cachedStatement(sql: "BEGIN DEFERRED").execute() },
            end: { reader in
                if (try? reader.cachedStatement(sql: "COMMIT").execute()) == nil { try? reader.execute("ROLLBACK") }
            },
            close: { $0.close() })
    }

    private static func translate(_ error: any Error) -> GatewayError {
        if let error = error as? GatewayError { return error }
        if let error = error as? SQLiteError {
            // The status is SQLite's one mapping (SQLiteError.status), which the Lite library answers with too; a
            // file the gateway cannot open (404) or read (401) is the server's problem, not the client's: 500 (and a
            // config naming it is 400 `server`).
            switch error.status {
            case 503: return .serviceUnavailable("The database is busy")
            case 507: return GatewayError(statusCode: 507, reason: "The disk is full")
            case 401, 404, 500: return .internalError("Storage error: \(error.message)")
            default: return GatewayError(statusCode: error.status, reason: "Storage error: \(error.message)")
            }
        }
        return .internalError("Storage error: \(error)")
    }

    /// Runs `body` with the open connection under the lock, translating errors.
    ///
    /// Index rows the open batch has recorded are written first, so that `body` reads them.
    func withConnection<T>(_ body: (Connection) throws -> T) throws(GatewayError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let connection else { throw .serviceUnavailable("The database is closed") }
        do {
            try writePendingIndexRows(connection)
            return try body(connection)
        } catch {
            throw Self.translate(error)
        }
    }

    /// Runs `body` with a connection to read committed data from: a reader (``ReaderPool``) in a read transaction of
    /// its own, so that it neither waits for a write in progress nor sees part of one; the writer inside this
    /// thread's own transaction (an ``inBatch(_:)`` body or an ``update(documentID:_:)`` transform reading through
    /// the storage sees what it wrote), in memory (where the lock alone makes a read whole, and a transaction would
    /// only add a `BEGIN` and a `COMMIT` to every `GET`), or once the storage is closed.
    func withReader<T>(_ body: (Connection) throws -> T) throws(GatewayError) -> T {
        if let readers, !isInThisThreadsTransaction {
            do {
                if let result = try readers.withReader(body) { return result }
            } catch {
                throw Self.translate(error)
            }
        }
        return try withConnection(body)
    }

    /// Whether this thread has the writer's transaction open. The lock is recursive: taking it at once means this
    /// thread holds it already or nobody does, and a transaction open while nobody holds it is none of this thread's.
    private var isInThisThreadsTransaction: Bool {
        guard lock.try() else { return false }
        defer { lock.unlock() }
        return inBatchTransaction || ((try? connection?.isInTransaction) ?? false) == true
    }

    /// Writes the index rows recorded since the last time (``ChannelIndex``, ``GrantIndex``), in the open
    /// transaction: a batch's rows go in together, once the batch's netting (``PendingIndexRows``) is done.
    private func writePendingIndexRows(_ connection: Connection) throws {
        guard !pendingIndexRows.isEmpty else { return }
        let rows = pendingIndexRows
        pendingIndexRows = PendingIndexRows()
        try ChannelIndex.write(rows, connection)
        try GrantIndex.write(rows, connection)
    }

    public func close() {
        readers?.close()
        lock.withLock {
            if let connection {
                try? connection.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('last_sequence', \(Int64(sequence)))")
                connection.close()
            }
            connection = nil
        }
    }

    // MARK: - Documents

    public var lastSequence: UInt64 {
        get throws(GatewayError) { try withConnection { _ in sequence } }
    }

    /// Allocates a sequence for a principal change, recording it as the last sequence so that no document
    /// takes it, even after a crash.
    public func nextSequence() throws(GatewayError) -> UInt64 {
        try withConnection { connection in
            let next = sequence + 1
            try connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_sequence', ?)", Int64(next))
            sequence = next
            return next
        }
    }

    public func document(id: String) throws(GatewayError) -> StoredDocument? {
        try withReader { connection in try read(id, connection) }
    }

    public func documents(ids: [String], winnerAsText: Bool) throws(GatewayError) -> [String: StoredDocument] {
        try withReader { connection in
            var documents: [String: StoredDocument] = [:]
            for id in ids where documents[id] == nil {
                if let document = try read(id, connection, winnerAsText: winnerAsText) { documents[id] = document }
            }
            return documents
        }
    }

    public func leafRevisions(ids: [String]) throws(GatewayError) -> [String: [RevisionID]] {
        try withReader { connection in
            let statement = try connection.cachedStatement(sql: "SELECT metadata FROM documents WHERE id = ?")
            defer { statement.reset() }
            var leaves: [String: [RevisionID]] = [:]
            for id in ids where leaves[id] == nil {
                statement.reset()
                try statement.bind(id, at: 1)
                if try statement.step() {
                    leaves[id] = try StoredDocumentCodec.leafRevisions(id: id, metadata: statement.blob(at: 0))
                }
            }
            return leaves
        }
    }

    @discardableResult
    public func update(
        documentID: String, _ transform: (StoredDocument?, any GatewayStorage) throws(GatewayError) -> StoredDocument?
    ) throws(GatewayError) -> StoredDocument? {
        try documentWrite { connection in
            let current = try read(documentID, connection)
            guard let updated = try transform(current, self) else { return nil }
            guard updated.tree.winner != nil else { throw GatewayError.internalError("A stored document needs a revision") }
            let rows = EncodedWrite.Rows(document: updated, previous: current)
            let previous = try storedRow(of: documentID, connection)
            return rows.document(storedAt: try write(rows, documentID: documentID, replacing: previous, connection))
        }
    }

    /// The rows of writes are worked out before the storage's lock (``EncodedWrite``).
    public var encodesWritesAhead: Bool { true }

    /// Writes an encoded write's rows if the document is still at the sequence the write was computed on: under the
    /// lock, only the database's own work remains.
    public func store(_ write: EncodedWrite) throws(GatewayError) -> UInt64? {
        try documentWrite { connection in
            let id = write.document.id
            let current = try storedRow(of: id, connection)
            guard current?.sequence == write.previousSequence else { return nil }
            for data in write.attachments { try putAttachment(data) }
            let rows = try write.rows ?? EncodedWrite.Rows(document: write.document, previous: read(id, connection))
            return try self.write(rows, documentID: id, replacing: current, connection)
        }
    }

    /// Runs a document write under the lock, in a transaction of its own or the open batch's; on failure the
    /// sequences it took are given back and the principal cache forgets grants it recorded.
    private func documentWrite<T>(_ body: (Connection) throws -> T) throws(GatewayError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let connection else { throw .serviceUnavailable("The database is closed") }
        let sequenceBefore = sequence
        do {
            guard inBatchTransaction else {
                totals.begin(atChanges: Self.changeCount(connection))
                let result = try connection.transaction(.immediate) { connection in
                    let result = try body(connection)
                    try writePendingIndexRows(connection)
                    return result
                }
                memoryIndex?.commit()
                totals.commit(atChanges: Self.changeCount(connection))
                return result
            }
            return try body(connection)
        } catch {
            if !inBatchTransaction {
                pendingIndexRows = PendingIndexRows()
                memoryIndex?.rollback()
                totals.rollback(atChanges: Self.changeCount(connection))
            }
            if sequence != sequenceBefore { principalCache.invalidateAll() }
            sequence = sequenceBefore
            throw Self.translate(error)
        }
    }

    /// Writes a document's rows at the next sequence, replacing its row at `previous`; returns the sequence.
    ///
    /// In an ``inBatch(_:)`` transaction no savepoint is needed for a document to fail alone: nothing is written
    /// before its edit has succeeded (attachments come last in the edit, once nothing can refuse it); a failure here
    /// fails the whole batch instead.
    private func write(
        _ rows: EncodedWrite.Rows, documentID: String, replacing previous: StoredRow?, _ connection: Connection
    ) throws -> UInt64 {
        do {
            sequence += 1
            let changes = rows.changes.settingPendingSequence(to: sequence)
            record(changes)
            // The grant rows inserted and deleted are exactly the grants the write adds and takes back.
            if !changes.insertedGrantRows.isEmpty || !changes.deletedGrantRows.isEmpty {
                principalCache.apply(
                    added: changes.insertedGrantRows.map(\.grant), removed: changes.deletedGrantRows.map(\.grant),
                    at: sequence)
            }
            if let previous { try deleteRow(previous, connection) }
            let sequence = sequence
            try connection.execute(
                "INSERT INTO documents (sequence, id, deleted, rev, body, metadata, expiry) VALUES (?, ?, ?, ?, ?, ?, ?)"
            ) { statement in
                try statement.bind(Int64(sequence), at: 1)
                try statement.bind(documentID, at: 2)
                try statement.bind(rows.isDeleted, at: 3)
                try statement.bind(rows.revision, at: 4)
                try statement.bind(rows.winnerBody, at: 5)
                try statement.bind(rows.metadata, at: 6)
                try statement.bind(rows.expiry?.timeIntervalSince1970, at: 7)
            }
            totals.recordInsert(isDeleted: rows.isDeleted, bytes: rows.winnerBody.count)
            return sequence
        } catch {
            if inBatchTransaction { batchFailure = error }
            throw error
        }
    }

    /// Runs `body` atomically: in a transaction of its own, or as a savepoint of the open ``inBatch(_:)``
    /// transaction (so that its failing leaves the rest of the batch).
    private func atomically<T>(_ connection: Connection, _ body: (Connection) throws -> T) throws -> T {
        let mark = memoryIndex?.mark
        let inBatch = inBatchTransaction
        do {
            guard inBatch else {
                totals.begin(atChanges: Self.changeCount(connection))
                let result = try connection.transaction(.immediate, body)
                memoryIndex?.commit()
                totals.commit(atChanges: Self.changeCount(connection))
                return result
            }
            return try connection.savepoint(body)
        } catch {
            if let mark { memoryIndex?.rollback(to: mark) }
            if inBatch {
                totals.forgetOpenChanges()
            } else {
                totals.rollback(atChanges: Self.changeCount(connection))
            }
            throw error
        }
    }

    /// Runs `body` in one transaction: an ``update(documentID:_:)`` whose transform fails leaves the others, and
    /// everything is committed once at the end — one WAL write for a whole `_bulk_docs` request
    /// instead of one per document. Nothing is visible to other callers before the commit (they wait for the
    /// lock). Nested batches join the outer one. `body` gets this storage itself: the one writer connection is the
    /// calling thread's for the whole batch, behind the storage's lock.
    ///
    /// - Throws: `body`'s error, the commit's, or that of a document's write failing halfway (after its transform);
    ///   then nothing of the batch is stored, and its sequences are skipped (never reused, so no feed can miss a
    ///   later change).
    public func inBatch<T>(_ body: (any GatewayStorage) throws(GatewayError) -> T) throws(GatewayError) -> T {
        lock.lock()
        defer { lock.unlock() }
        if inBatchTransaction { return try body(self) }
        guard let connection else { throw .serviceUnavailable("The database is closed") }
        do {
            totals.begin(atChanges: Self.changeCount(connection))
            let result = try connection.transaction { _ in
                inBatchTransaction = true
                batchFailure = nil
                defer {
                    inBatchTransaction = false
                    batchFailure = nil
                }
                let result = try body(self)
                if let batchFailure { throw batchFailure }
                try writePendingIndexRows(connection)
                return result
            }
            memoryIndex?.commit()
            totals.commit(atChanges: Self.changeCount(connection))
            return result
        } catch {
            pendingIndexRows = PendingIndexRows()
            memoryIndex?.rollback()
            totals.rollback(atChanges: Self.changeCount(connection))
            principalCache.invalidateAll()  // grants the batch recorded in the cache were rolled back
            throw Self.translate(error)
        }
    }

    /// A document's current revision and whether it is deleted, as a channel feed joins them (nil when absent).
    static func revision(of id: String, _ connection: Connection) throws -> (revision: String, isDeleted: Bool)? {
        let statement = try connection.cachedStatement(sql: "SELECT rev, deleted FROM documents WHERE id = ?")
        defer { statement.reset() }
        try statement.bind(id, at: 1)
        guard try statement.step() else { return nil }
        return (statement.string(at: 0), statement.bool(at: 1))
    }

    private func read(_ id: String, _ connection: Connection, winnerAsText: Bool = false) throws -> StoredDocument? {
        let statement = try connection.cachedStatement(sql: "SELECT sequence, body, metadata FROM documents WHERE id = ?")
        defer { statement.reset() }
        try statement.bind(id, at: 1)
        guard try statement.step() else { return nil }
        return try StoredDocumentCodec.decode(
            id: id, sequence: UInt64(statement.int64(at: 0)), winnerBody: statement.blob(at: 1),
            metadata: statement.blob(at: 2), winnerAsText: winnerAsText)
    }

    /// Records a change's index rows in the open transaction: in ``MemoryIndex`` at once, or for a file's tables
    /// (``ChannelIndex`` and ``GrantIndex``) with the transaction's other rows, written before it commits or is read.
    private func record(_ changes: IndexChanges) {
        if memoryIndex != nil {
            memoryIndex?.apply(changes)
        } else {
            pendingIndexRows.record(changes)
        }
    }

    /// Writes the index rows of `changes` at once.
    private func apply(_ changes: IndexChanges, _ connection: Connection) throws {
        record(changes)
        try writePendingIndexRows(connection)
    }

    /// The connection's total change count, for ``totals`` (-1, which no totals match, when it cannot be read).
    static func changeCount(_ connection: Connection) -> Int {
        (try? connection.totalChanges) ?? -1
    }

    /// What ``totals`` needs of a document's row, with its sequence.
    private struct StoredRow {
        var sequence: UInt64
        var isDeleted: Bool
        var bodyBytes: Int
    }

    /// Document `id`'s row (nil when absent): the lookup a write makes anyway, its count and size read with it.
    private func storedRow(of id: String, _ connection: Connection) throws -> StoredRow? {
        let statement = try connection.cachedStatement(
            sql: "SELECT sequence, deleted, length(body) FROM documents WHERE id = ?")
        defer { statement.reset() }
        try statement.bind(id, at: 1)
        guard try statement.step() else { return nil }
        return StoredRow(
            sequence: UInt64(statement.int64(at: 0)), isDeleted: statement.bool(at: 1),
            bodyBytes: Int(statement.int64(at: 2)))
    }

    /// Deletes a document's row, recording it in ``totals``.
    private func deleteRow(_ row: StoredRow, _ connection: Connection) throws {
        try connection.execute("DELETE FROM documents WHERE sequence = ?") { try $0.bind(Int64(row.sequence), at: 1) }
        totals.recordRemoval(isDeleted: row.isDeleted, bytes: row.bodyBytes)
    }

    @discardableResult
    public func purge(documentID: String, expiredBy: Date?) throws(GatewayError) -> Bool {
        try withConnection { connection in
            try atomically(connection) { connection in
                try connection.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('last_sequence', ?)", Int64(sequence))
                guard let document = try read(documentID, connection),
                    let row = try storedRow(of: documentID, connection)
                else { return false }
                if let expiredBy, !(document.expiry.map { $0 <= expiredBy } ?? false) { return false }
                var changes = IndexChanges()
                changes.recordDeletion(of: document)
                try apply(changes, connection)
                for grant in document.grantSequences.keys { principalCache.invalidate(grant.principal) }
                try deleteRow(row, connection)
                return true
            }
        }
    }

    public var statistics: StorageStatistics {
        get throws(GatewayError) {
            try withConnection { connection in
                // Counted by scanning every row only when a write did not keep the totals (``DocumentTotals``).
                let changes = try connection.totalChanges
                var statistics = StorageStatistics()
                if let current = totals.current(atChanges: changes) {
                    statistics = current
                } else {
                    if let row = try connection.firstRow(
                        """
                        SELECT count(*) - coalesce(sum(deleted != 0), 0), coalesce(sum(deleted != 0), 0),
                            coalesce(sum(length(body)), 0) FROM documents
                        """
                    ) {
                        statistics.documentCount = Int(row[0].int64Value ?? 0)
                        statistics.deletedDocumentCount = Int(row[1].int64Value ?? 0)
                        statistics.externalSize = Int(row[2].int64Value ?? 0)
                    }
                    totals.store(statistics, atChanges: changes)
                }
                let pageSize = Int(try connection.firstValue("PRAGMA page_size")?.int64Value ?? 0)
                let pages = Int(try connection.firstValue("PRAGMA page_count")?.int64Value ?? 0)
                let free = Int(try connection.firstValue("PRAGMA freelist_count")?.int64Value ?? 0)
                statistics.fileSize = pages * pageSize
                statistics.activeSize = (pages - free) * pageSize
                return statistics
            }
        }
    }

    public func changes(since: UInt64, limit: Int?) throws(GatewayError) -> [ChangeEntry] {
        try withReader { connection in
            var entries: [ChangeEntry] = []
            try connection.forEachRow(
                "SELECT sequence, id, rev, deleted FROM documents WHERE sequence > ? ORDER BY sequence LIMIT ?",
                Int64(clamping: since), Int64(limit ?? -1)
            ) { row in
                entries.append(
                    ChangeEntry(
                        sequence: UInt64(row.int64(at: 0)), documentID: row.string(at: 1),
                        revisionID: try RevisionID(parsing: row.string(at: 2)), isDeleted: row.bool(at: 3)))
            }
            return entries
        }
    }

    public func changes(
        inChannels channels: Set<String>, since: UInt64, limit: Int?
    ) throws(GatewayError) -> [ChangeEntry] {
        guard !channels.isEmpty else { return [] }
        if memoryIndex != nil {
            return try withConnection { connection in
                try memoryIndex?.channels.changes(inChannels: channels, since: since, limit: limit) { id in
                    try Self.revision(of: id, connection)
                } ?? []
            }
        }
        if channels.count > ChannelIndex.channelListLimit {
            return try withReader { connection in
                try ChannelIndex.changesBySequence(inChannels: channels, since: since, limit: limit, connection)
            }
        }
        return try withReader { connection in
            let placeholders = Array(repeating: "?", count: channels.count).joined(separator: ", ")
            let channelList = channels.sorted()
            // Per document, its rows after `since`: a document's current channels' rows are all at its latest
            // sequence, so it is still in one of the channels exactly when one of those rows is not a removal.
            // Range scans of each channel's rows after `since`: a feed's cost follows its new changes.
            let sql = """
                SELECT m.doc_id, max(m.sequence), min(m.removed), d.rev, d.deleted,
                    group_concat(CASE WHEN m.removed = 1 THEN m.channel END, char(31))
                FROM channel_changes m JOIN documents d ON d.id = m.doc_id
                WHERE m.channel IN (\(placeholders)) AND m.sequence > ?
                GROUP BY m.doc_id
                ORDER BY max(m.sequence)
                LIMIT ?
                """
            var arguments: [(any SQLiteBindable)?] = channelList
            arguments.append(Int64(clamping: since))
            arguments.append(Int64(limit ?? -1))
            return try connection.query(sql, arguments: arguments).map { row in
                let stillIn = (row[2].int64Value ?? 1) == 0
                let removed = stillIn ? [] : Set((row[5].stringValue ?? "").split(separator: "\u{1F}").map(String.init))
                return ChangeEntry(
                    sequence: UInt64(row[1].int64Value ?? 0), documentID: row[0].stringValue ?? "",
                    revisionID: try RevisionID(parsing: row[3].stringValue ?? ""),
                    isDeleted: (row[4].int64Value ?? 0) != 0, removedFrom: removed)
            }
        }
    }

    /// ``changes(inChannels:since:limit:)`` read by sequence, the way feeds of users with many channels are, whatever
    /// the channel count: for tests holding both readings to the same answers.
    func changesBySequence(inChannels channels: Set<String>, since: UInt64, limit: Int?) throws(GatewayError)
        -> [ChangeEntry]
    {
        try withReader { connection in
            if let memoryIndex {
                return try memoryIndex.channels.changes(
                    inChannels: channels, since: since, limit: limit, bySequence: true
                ) { id in try Self.revision(of: id, connection) }
            }
            return try ChannelIndex.changesBySequence(inChannels: channels, since: since, limit: limit, connection)
        }
    }

    /// Every channel row as `channel@sequence`, `-` after a removal, in (sequence, channel) order: for tests.
    func channelRowDescriptions() throws(GatewayError) -> [String] {
        try withConnection { connection in
            if let memoryIndex { return memoryIndex.channels.rowDescriptions() }
            let sql = "SELECT channel, sequence, removed FROM channel_changes ORDER BY sequence, channel"
            return try connection.query(sql).map { row in
                "\(row[0].stringValue ?? "")@\(row[1].int64Value ?? 0)\((row[2].int64Value ?? 0) == 1 ? "-" : "")"
            }
        }
    }

    public func documentIDs(from startKey: String?, to endKey: String?, limit: Int?) throws(GatewayError) -> [String] {
        try withReader { connection in
            try connection.query(
                "SELECT id FROM documents WHERE id >= ? AND (? IS NULL OR id <= ?) ORDER BY id LIMIT ?",
                startKey ?? "", endKey, endKey, Int64(limit ?? -1)
            ).compactMap { $0[0].stringValue }
        }
    }

    public func liveDocumentIDs(in range: DocumentIDRange, limit: Int?) throws(GatewayError) -> [String] {
        let (bounds, keys) = range.conditions(on: "id")
        let arguments: [(any SQLiteBindable)?] = keys + [Int64(limit ?? -1)]
        let sql = """
            SELECT id FROM documents WHERE \((["deleted = 0"] + bounds).joined(separator: " AND "))
            ORDER BY id \(range.sqlOrder) LIMIT ?
            """
        return try withReader { connection in
            try connection.query(sql, arguments: arguments).compactMap { $0[0].stringValue }
        }
    }

    /// The channels' rows in ID order, merged as they are read (``ChannelIndex/liveDocumentIDs(inChannels:in:limit:_:)``).
    /// In memory, and for more channels than ``ChannelIndex/documentMergeChannelLimit``, from the channels' feeds.
    public func liveDocumentIDs(
        inChannels channels: Set<String>, in range: DocumentIDRange, limit: Int?
    ) throws(GatewayError) -> [String] {
        guard memoryIndex == nil, channels.count <= ChannelIndex.documentMergeChannelLimit else {
            // From the channels' feeds: the in-memory index keeps channel rows by sequence only.
            let ids = try changes(inChannels: channels, since: 0, limit: nil)
                .filter { entry in !entry.isDeleted && entry.removedFrom.isEmpty && range.contains(entry.documentID) }
                .map(\.documentID)
            return Self.page(of: ids, range, limit: limit)
        }
        return try withReader { connection in
            try ChannelIndex.liveDocumentIDs(inChannels: channels, in: range, limit: limit ?? .max, connection)
        }
    }

    /// The first `limit` of `ids` (in any order, each once) in `range`'s order. IDs compare as their UTF-8 bytes: two
    /// IDs Swift holds equal (`"é"` precomposed or not) are two documents.
    private static func page(of ids: some Sequence<String>, _ range: DocumentIDRange, limit: Int?) -> [String] {
        var sorted: [String] = []
        for id in ids.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        where !(sorted.last?.utf8.elementsEqual(id.utf8) ?? false) {
            sorted.append(id)
        }
        let ordered = range.descending ? Array(sorted.reversed()) : sorted
        return Array(ordered.prefix(limit ?? .max))
    }

    public func expiredDocumentIDs(at date: Date, limit: Int) throws(GatewayError) -> [String] {
        try withReader { connection in
            try connection.query(
                "SELECT id FROM documents WHERE expiry IS NOT NULL AND expiry <= ? ORDER BY expiry LIMIT ?",
                date.timeIntervalSince1970, Int64(limit)
            ).compactMap { $0[0].stringValue }
        }
    }

    // MARK: - Local documents

    public func localDocument(id: String) throws(GatewayError) -> (revision: String, body: JSONValue)? {
        try withReader { connection in
            guard let row = try connection.firstRow("SELECT rev, body FROM local_documents WHERE id = ?", id) else {
                return nil
            }
            return (row[0].stringValue ?? "", try JSONValue(parsing: row[1].blobValue ?? []))
        }
    }

    public func putLocalDocument(id: String, body: JSONValue, expectedRevision: String?) throws(GatewayError)
        -> String
    {
        try withConnection { connection in
            try atomically(connection) { connection in
                let current = try connection.firstValue("SELECT rev FROM local_documents WHERE id = ?", id)?.stringValue
                guard current == expectedRevision else {
                    throw GatewayError.conflict("Document update conflict")
                }
                let number = current.flatMap { Int($0.split(separator: "-").last ?? "") } ?? 0
                let revision = "0-\(number + 1)"
                try connection.execute(
                    "INSERT OR REPLACE INTO local_documents (id, rev, body) VALUES (?, ?, ?)", id, revision,
                    body.serialized())
                return revision
            }
        }
    }

    public func deleteLocalDocument(id: String, expectedRevision: String?) throws(GatewayError) {
        try withConnection { connection in
            try atomically(connection) { connection in
                guard let current = try connection.firstValue("SELECT rev FROM local_documents WHERE id = ?", id)?
                    .stringValue
                else { throw GatewayError.notFound("missing") }
                guard expectedRevision == nil || expectedRevision == current else {
                    throw GatewayError.conflict("Document update conflict")
                }
                try connection.execute("DELETE FROM local_documents WHERE id = ?", id)
            }
        }
    }

    // MARK: - Attachments

    public func attachment(digest: String) throws(GatewayError) -> [UInt8]? {
        try withReader { connection in
            try connection.firstValue("SELECT data FROM attachments WHERE digest = ?", digest)?.blobValue
        }
    }

    @discardableResult
    public func putAttachment(_ data: [UInt8]) throws(GatewayError) -> String {
        let digest = AttachmentDigest.sha1(of: data).description
        try withConnection { connection in
            try connection.execute("INSERT OR IGNORE INTO attachments (digest, data) VALUES (?, ?)", digest, data)
        }
        return digest
    }
}
