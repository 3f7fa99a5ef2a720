import CouchetteCore
import Foundation
import NIOCore
import PostgresNIO
import Synchronization

/// ``GatewayStorage`` in PostgreSQL (`"server": "postgres://…"`), which any number of gateway nodes serve at once.
///
/// Each gateway database keeps its tables (``PostgresSchema``) in a PostgreSQL schema named `couchette_NAME`. Nodes
/// keep nothing that another node can change in memory: documents, users, roles, sessions and grants are read from
/// PostgreSQL at each call.
///
/// Writers of every node take their sequences without waiting for each other (``PostgresSequencer``) and lock only
/// the documents they change (`SELECT … FOR UPDATE`); feeds read up to the stable sequence, below which nothing can
/// commit any more, so a feed reading `since < sequence ≤ stable` never passes a sequence that commits later
/// (docs/decisions.md, "Sequences across nodes without a lock"). Rows are written at the end of a transaction in one
/// statement, whatever the number of documents. Committing sends `NOTIFY couchette`, which every node's
/// ``PostgresChangeListener`` turns into a wake-up of its feeds at the new stable sequence.
public final class PostgresGatewayStorage: GatewayStorage, @unchecked Sendable {
    let pool: PostgresConnectionPool
    /// The PostgreSQL schema holding this database's tables.
    let schema: String
    /// Where writers take sequences and feeds learn how far they may read.
    let sequencer: PostgresSequencer
    /// What the storage and its views bound to a transaction share.
    let shared: Shared
    /// The transaction this view of the storage runs every statement in (the storage a batch's body or an update's
    /// transform gets); nil for the storage itself, whose calls each borrow a connection or open a transaction.
    let openTransaction: PostgresConnectionPool.Transaction?

    /// What the storage and its views share.
    final class Shared: @unchecked Sendable {
        let listener = PostgresChangeListener.Slot()
        /// Feed reads the feeds woken by one commit share.
        let feedReads = PostgresFeedReads()
        /// The highest stable sequence read so far. A stable sequence stays safe for good (every sequence taken later
        /// is above it), but a read can find a lower one (a writer between reading the sequence and taking its
        /// ticket), and feeds must never see it go down: every read reports at least this (``stableSequence(_:)``).
        let stableHighWater = Atomic<UInt64>(0)
        /// Whether a listener counts every node's commits (``observeCommits(pollInterval:_:)``). Until one does, other
        /// nodes' commits leave the commit count as it is, and a kept feed read could be reused past them: feed
        /// reads are then not kept.
        let countsEveryCommit = Atomic<Bool>(false)
    }

    /// Opens (creating its tables if needed) the storage of database `databaseName` at `location`.
    ///
    /// - Throws: 503 when PostgreSQL cannot be reached; 500 for tables written by a newer gateway.
    public init(location: PostgresLocation, databaseName: String) throws(GatewayError) {
        self.schema = "couchette_" + databaseName
        sequencer = PostgresSequencer(schema: schema)
        pool = try PostgresConnectionPool(
            location: location, searchPath: schema, maximumConnections: location.maximumConnections)
        shared = Shared()
        openTransaction = nil
        do {
            try PostgresSchema.migrate(schema: schema, pool)
        } catch {
            pool.close()
            throw error
        }
    }

    /// A view of `storage` whose every call runs in `transaction`.
    private init(viewOf storage: PostgresGatewayStorage, in transaction: PostgresConnectionPool.Transaction) {
        pool = storage.pool
        schema = storage.schema
        sequencer = storage.sequencer
        shared = storage.shared
        openTransaction = transaction
    }

    deinit { close() }

    /// Stops the listener and closes the connections; does nothing on a view bound to a transaction.
    public func close() {
        guard openTransaction == nil else { return }
        shared.listener.stop()
        pool.close()
    }

    // MARK: - Connections

    /// Runs `body` with the view's transaction's connection, or one borrowed for the call.
    @discardableResult
    func withConnection<T>(_ body: (PostgresLink) throws(GatewayError) -> T) throws(GatewayError) -> T {
        if let openTransaction { return try body(try openTransaction.connection) }
        return try pool.withConnection(body)
    }

    /// Runs `body` with a connection, holding no thread while it waits for one or for PostgreSQL's answers: the
    /// view's transaction's, or one borrowed for the call. Every `async` read goes through it.
    func withConnection<T>(_ body: (PostgresLink) async throws(GatewayError) -> T) async throws(GatewayError) -> T {
        if let openTransaction { return try await body(try openTransaction.connection) }
        return try await pool.withConnection(body)
    }

    /// Runs `body` in the view's transaction, or in a transaction of its own (``PostgresConnectionPool/transaction(retries:_:)``).
    func inTransaction<T>(_ body: (PostgresLink) throws(GatewayError) -> T) throws(GatewayError) -> T {
        if let openTransaction { return try body(try openTransaction.connection) }
        return try pool.transaction { link, _ throws(GatewayError) in try body(link) }
    }

    /// `inTransaction` for an `async` body, holding no thread while it waits for a connection or for PostgreSQL's
    /// answers; a view bound to a transaction runs it on that transaction's connection.
    func inTransaction<T>(_ body: (PostgresLink) async throws(GatewayError) -> T) async throws(GatewayError) -> T {
        if let openTransaction { return try await body(try openTransaction.connection) }
        return try await pool.transaction(body)
    }

    /// Calls `handler` with every commit of any node, this one's included, at the stable sequence (read after a
    /// `NOTIFY`, and with the settings' version every `pollInterval`), until the storage closes.
    public func observeCommits(pollInterval: Duration, _ handler: @escaping @Sendable (StorageCommit) -> Void) {
        let pool = pool
        shared.countsEveryCommit.store(true, ordering: .releasing)
        shared.listener.start(
            PostgresChangeListener(pool: pool, schema: schema, sequencer: sequencer, pollInterval: pollInterval) {
                [weak self] commit in
                guard let self else { return }
                var commit = commit
                commit.sequence = raiseStableSequence(to: commit.sequence)
                pool.noteCommit()  // before the feeds it wakes read: none may take an answer from before it
                handler(commit)
            })
    }

    // MARK: - Shared settings

    public func sharedSettings() throws(GatewayError) -> SharedDatabaseSettings? {
        try withConnection { link throws(GatewayError) -> SharedDatabaseSettings? in
            guard let row = try link.query("SELECT value FROM meta WHERE key = 'settings'").rows.first else { return nil }
            let text = try PostgresLink.decode(row, as: String.self)
            do { return try JSONDecoder().decode(SharedDatabaseSettings.self, from: Data(text.utf8)) } catch {
                throw .internalError("The shared settings are corrupt")
            }
        }
    }

    /// Stores `settings` as a new version, which the commit's notification names, so every node reloads them. It
    /// runs as a write transaction that takes no sequence; the version row's lock orders deployments.
    @discardableResult
    public func shareSettings(_ settings: SharedDatabaseSettings) throws(GatewayError) -> UInt64 {
        try writeTransaction { batch, link, _ throws(GatewayError) in
            let current = try link.query("SELECT value FROM meta WHERE key = 'settings_version' FOR UPDATE").rows.first
            let version = try (current.map { row throws(GatewayError) in
                UInt64(try PostgresLink.decode(row, as: String.self)) ?? 0
            } ?? 0) + 1
            var settings = settings
            settings.version = version
            let text: String
            do { text = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self) } catch {
                throw .internalError("Cannot encode the shared settings: \(error)")
            }
            try link.query(
                """
                INSERT INTO meta (key, value) VALUES ('settings', \(text)), ('settings_version', \(String(version)))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
            batch.settingsVersion = version
            return version
        }
    }

    // MARK: - Sequences

    /// The stable sequence (``PostgresSequencer/stable(_:)``): a sequence taken by a write still in flight is not
    /// given out as the last one, so that no feed starting from it can miss that write.
    public var lastSequence: UInt64 {
        get throws(GatewayError) {
            try withConnection { link throws(GatewayError) in try stableSequence(link) }
        }
    }

    /// ``lastSequence``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchLastSequence() async throws(GatewayError) -> UInt64 {
        return try await withConnection { link async throws(GatewayError) in try await stableSequence(link) }
    }

    /// The stable sequence, never lower than one read before: a rise counts as a commit (``PostgresConnectionPool/noteCommit()``)
    /// before anyone hears of it, so that no feed reuses a read made before it (``PostgresFeedReads``).
    func stableSequence(_ link: PostgresLink) throws(GatewayError) -> UInt64 {
        raiseStableSequence(to: try sequencer.stable(link))
    }

    /// ``stableSequence(_:)-(PostgresLink)``, holding no thread while PostgreSQL answers.
    func stableSequence(_ link: PostgresLink) async throws(GatewayError) -> UInt64 {
        raiseStableSequence(to: try await sequencer.stable(link))
    }

    /// Raises the high-water mark of stable sequences to `read` if it is higher, and returns the mark.
    private func raiseStableSequence(to read: UInt64) -> UInt64 {
        let previous = shared.stableHighWater.max(read, ordering: .acquiringAndReleasing).oldValue
        if read > previous { pool.noteCommit() }
        return max(previous, read)
    }

    public func nextSequence() throws(GatewayError) -> UInt64 {
        try writeTransaction { batch, link, _ throws(GatewayError) in try batch.nextSequence(sequencer, link) }
    }

    /// This storage's listener announces every commit, the node's own included, at the stable sequence: a write's
    /// own sequence may not be readable yet.
    public var announcesOwnCommits: Bool { true }

    // MARK: - Reading documents

    public func document(id: String) throws(GatewayError) -> StoredDocument? {
        if let batch = currentBatch, let known = batch.known(id) { return known }
        return try withConnection { link throws(GatewayError) in try read(id, link) }
    }

    public func documents(ids: [String], winnerAsText: Bool) throws(GatewayError) -> [String: StoredDocument] {
        guard !ids.isEmpty else { return [:] }
        return try withConnection { link throws(GatewayError) in
            try Self.decodeDocuments(try link.query(Self.documentsQuery(ids)), winnerAsText: winnerAsText)
        }
    }

    /// ``documents(ids:winnerAsText:)`` holding no thread while it waits for a connection or for PostgreSQL's
    /// answer.
    public func fetchDocuments(ids: [String], winnerAsText: Bool) async throws(GatewayError) -> [String: StoredDocument] {
        guard !ids.isEmpty else { return [:] }
        return try await withConnection { link async throws(GatewayError) in
            try Self.decodeDocuments(try await link.query(Self.documentsQuery(ids)), winnerAsText: winnerAsText)
        }
    }

    /// The leaves of the documents' trees, read from their metadata alone (no body crosses the network).
    public func leafRevisions(ids: [String]) throws(GatewayError) -> [String: [RevisionID]] {
        guard !ids.isEmpty else { return [:] }
        return try withConnection { link throws(GatewayError) in
            try Self.decodeLeaves(try link.query(Self.metadataQuery(ids)))
        }
    }

    /// ``leafRevisions(ids:)``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchLeafRevisions(ids: [String]) async throws(GatewayError) -> [String: [RevisionID]] {
        guard !ids.isEmpty else { return [:] }
        return try await withConnection { link async throws(GatewayError) in
            try Self.decodeLeaves(try await link.query(Self.metadataQuery(ids)))
        }
    }

    private static func metadataQuery(_ ids: [String]) -> PostgresQuery {
        "SELECT id, metadata FROM documents WHERE id = ANY(\(Array(Set(ids))))"
    }

    private static func decodeLeaves(_ result: PostgresQueryResult) throws(GatewayError) -> [String: [RevisionID]] {
        var leaves: [String: [RevisionID]] = [:]
        for row in result.rows {
            let (id, metadata) = try PostgresLink.decode(row, as: (String, ByteBuffer).self)
            leaves[id] = try StoredDocumentCodec.leafRevisions(id: id, metadata: metadata.bytes)
        }
        return leaves
    }

    private static func documentsQuery(_ ids: [String]) -> PostgresQuery {
        "SELECT id, sequence, body, metadata FROM documents WHERE id = ANY(\(Array(Set(ids))))"
    }

    private static func decodeDocuments(
        _ result: PostgresQueryResult, winnerAsText: Bool
    ) throws(GatewayError) -> [String: StoredDocument] {
        var documents: [String: StoredDocument] = [:]
        for row in result.rows {
            let (id, sequence, body, metadata) = try PostgresLink.decode(row, as: (String, Int64, ByteBuffer, ByteBuffer).self)
            documents[id] = try decodeDocument(
                id: id, sequence: sequence, body: body, metadata: metadata, winnerAsText: winnerAsText)
        }
        return documents
    }

    func read(_ id: String, _ link: PostgresLink) throws(GatewayError) -> StoredDocument? {
        guard let row = try link.query("SELECT sequence, body, metadata FROM documents WHERE id = \(id)").rows.first
        else { return nil }
        let (sequence, body, metadata) = try PostgresLink.decode(row, as: (Int64, ByteBuffer, ByteBuffer).self)
        return try Self.decodeDocument(id: id, sequence: sequence, body: body, metadata: metadata)
    }

    /// A document as the write transaction `batch` sees it: as the batch knows it, else read and locked
    /// (``lock(_:in:_:takingSequences:)``).
    private func latest(
        _ id: String, _ batch: PostgresWriteBatch, _ link: PostgresLink, takingSequences: Bool
    ) throws(GatewayError) -> StoredDocument? {
        if let known = batch.known(id) { return known }
        try lock([id], in: batch, link, takingSequences: takingSequences)
        return batch.known(id) ?? nil
    }

    /// Reads the documents `ids` into `batch` (``PostgresWriteBatch/prefetched``, absent ones also in
    /// ``PostgresWriteBatch/readAbsent``), locked until the transaction ends, in ID order (so that two batches
    /// locking the same documents cannot deadlock); in the same statement, when `takingSequences` and the batch has
    /// none left, takes one per document.
    private func lock(
        _ ids: [String], in batch: PostgresWriteBatch, _ link: PostgresLink, takingSequences: Bool
    ) throws(GatewayError) {
        let wanted = Set(ids)
        let count = takingSequences && !batch.hasSequences ? wanted.count : 0
        let rows = try link.query(
            """
            SELECT t.taken, d.id, d.sequence, d.body, d.metadata
            FROM take_sequences(\(Int32(clamping: count)), \(sequencer.tag)) AS t(taken)
            LEFT JOIN LATERAL (
                SELECT id, sequence, body, metadata FROM documents WHERE id = ANY(\(Array(wanted))) ORDER BY id FOR UPDATE
            ) AS d ON true
            """)
        var found: [String: StoredDocument] = [:]
        for (index, row) in rows.rows.enumerated() {
            let (taken, id, sequence, body, metadata) = try PostgresLink.decode(
                row, as: ([Int64], String?, Int64?, ByteBuffer?, ByteBuffer?).self)
            // Every row carries the same sequences (one call of the function): take them once.
            if index == 0 { batch.addSequences(taken) }
            guard let id, let sequence, let body, let metadata else { continue }
            found[id] = try Self.decodeDocument(id: id, sequence: sequence, body: body, metadata: metadata)
        }
        for id in wanted where batch.prefetched[id] == nil {
            batch.prefetched[id] = .some(found[id])
            if found[id] == nil { batch.readAbsent.insert(id) }
        }
    }

    static func decodeDocument(
        id: String, sequence: Int64, body: ByteBuffer, metadata: ByteBuffer, winnerAsText: Bool = false
    ) throws(GatewayError) -> StoredDocument {
        do {
            return try StoredDocumentCodec.decode(
                id: id, sequence: UInt64(sequence), winnerBody: body.bytes, metadata: metadata.bytes,
                winnerAsText: winnerAsText)
        } catch {
            throw .internalError("A stored document is corrupt: \(id)")
        }
    }

    // MARK: - Writing documents

    @discardableResult
    public func update(
        documentID: String,
        _ transform: (StoredDocument?, any GatewayStorage) throws(GatewayError) -> StoredDocument?
    ) throws(GatewayError) -> StoredDocument? {
        try writeTransaction { batch, link, view throws(GatewayError) in
            let current = try latest(documentID, batch, link, takingSequences: true)
            guard var updated = try transform(current, view) else { return nil }
            guard updated.tree.winner != nil else { throw .internalError("A stored document needs a revision") }
            updated.sequence = try batch.nextSequence(sequencer, link)
            var changes = IndexChanges()
            changes.recordUpdate(of: &updated, previous: current)
            batch.record(changes)
            batch.documents[documentID] = updated
            batch.purged.remove(documentID)
            return updated
        }
    }

    /// Rows worked out ahead let a write be stored in one statement (``PostgresDocumentWriter``).
    public var encodesWritesAhead: Bool { true }

    public func store(_ write: EncodedWrite) throws(GatewayError) -> UInt64? {
        try store([write])[0].get()
    }

    /// One statement for every write (``PostgresDocumentWriter``), run again, up to three times, after a deadlock or
    /// a serialization failure; inside an open write batch, through the batch instead.
    public func store(_ writes: [EncodedWrite]) throws(GatewayError) -> [Result<UInt64?, GatewayError>] {
        if openTransaction != nil {
            // The open batch holds documents it has not written yet: store through it, not beside it.
            return writes.map { write in Result { () throws(GatewayError) in try storeThroughUpdate(write) } }
        }
        let writer = PostgresDocumentWriter(schema: schema, sequencer: sequencer)
        var attempt = 0
        while true {
            var transient = false
            do throws(GatewayError) {
                let stored = try withConnection { link throws(GatewayError) in
                    defer { transient = link.lastFailureWasTransient }
                    return try writer.store(writes, link)
                }
                pool.noteCommit()
                return stored.map { .success($0) }
            } catch {
                guard runsAgain(afterFailedStore: &attempt, transient: transient) else { throw error }
            }
        }
    }

    /// ``store(_:)-([EncodedWrite])`` holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func submit(_ writes: [EncodedWrite]) async throws(GatewayError) -> [Result<UInt64?, GatewayError>] {
        guard openTransaction == nil else { return try store(writes) }
        let writer = PostgresDocumentWriter(schema: schema, sequencer: sequencer)
        var attempt = 0
        while true {
            var transient = false
            do throws(GatewayError) {
                let stored = try await withConnection { link async throws(GatewayError) in
                    defer { transient = link.lastFailureWasTransient }
                    return try await writer.store(writes, link)
                }
                pool.noteCommit()
                return stored.map { .success($0) }
            } catch {
                guard runsAgain(afterFailedStore: &attempt, transient: transient) else { throw error }
            }
        }
    }

    /// Whether a one-statement store that failed runs again: after a deadlock or a serialization failure, up to three
    /// times. Otherwise the write's ticket is announced ended (``announceTicketEnded()``) and the caller throws.
    private func runsAgain(afterFailedStore attempt: inout Int, transient: Bool) -> Bool {
        attempt += 1
        if transient && attempt <= 3 { return true }
        announceTicketEnded()
        return false
    }

    public func inBatch<T>(_ body: (any GatewayStorage) throws(GatewayError) -> T) throws(GatewayError) -> T {
        try writeTransaction { _, _, view throws(GatewayError) in try body(view) }
    }

    /// ``inBatch(_:)`` reading and locking the documents `ids` in one statement, instead of one
    /// statement per update.
    public func inBatch<T>(
        updating ids: [String], _ body: (any GatewayStorage) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        try writeTransaction { batch, link, view throws(GatewayError) in
            // Locked, and behind what the batch itself stores or purges (``PostgresWriteBatch/known(_:)``).
            try lock(ids, in: batch, link, takingSequences: true)
            return try body(view)
        }
    }

    @discardableResult
    public func purge(documentID: String, expiredBy: Date?) throws(GatewayError) -> Bool {
        try writeTransaction { batch, link, _ throws(GatewayError) in
            guard let document = try latest(documentID, batch, link, takingSequences: false) else { return false }
            if let expiredBy, !(document.expiry.map { $0 <= expiredBy } ?? false) { return false }
            var changes = IndexChanges()
            changes.recordDeletion(of: document)
            batch.record(changes)
            batch.documents[documentID] = nil
            batch.purged.insert(documentID)
            return true
        }
    }

    /// The write batch of the view's transaction, if it is a view.
    var currentBatch: PostgresWriteBatch? {
        openTransaction?.state as? PostgresWriteBatch
    }

    /// Runs `body` in a write transaction (the view's, or a new one): `body` locks the documents it reads, takes
    /// sequences (``PostgresWriteBatch/nextSequence(_:_:)``) and records documents and index rows in the batch, which
    /// are written just before the commit, which also notifies every node. `body` also gets a view of the storage
    /// bound to the transaction, for the caller's code that must run in it.
    func writeTransaction<T>(
        _ body: (PostgresWriteBatch, PostgresLink, PostgresGatewayStorage) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        if let openTransaction {
            guard let batch = currentBatch else { throw .internalError("A storage transaction was used after it ended") }
            return try body(batch, try openTransaction.connection, self)
        }
        var heldTicket = false
        do {
            return try pool.transaction { link, transaction throws(GatewayError) in
                let batch = PostgresWriteBatch()
                transaction.state = batch
                defer {
                    transaction.state = nil
                    heldTicket = heldTicket || batch.tookSequences
                }
                let result = try body(batch, link, PostgresGatewayStorage(viewOf: self, in: transaction))
                try batch.flush(link, schema: schema)
                return result
            }
        } catch {
            if heldTicket { announceTicketEnded() }
            throw error
        }
    }

    /// Tells every node that a write which held a ticket ended without committing (its notification went with its
    /// rollback): their feeds, held back by it, would otherwise wait for the next poll.
    func announceTicketEnded() {
        _ = try? withConnection { link throws(GatewayError) in
            try link.query("SELECT pg_notify('couchette', \(schema + " 0"))")
        }
    }

    public func expiredDocumentIDs(at date: Date, limit: Int) throws(GatewayError) -> [String] {
        try withConnection { link throws(GatewayError) in
            try link.strings(
                """
                SELECT id FROM documents WHERE expiry IS NOT NULL AND expiry <= \(date.timeIntervalSince1970)
                ORDER BY expiry LIMIT \(Int64(limit))
                """)
        }
    }

    public func documentIDs(from startKey: String?, to endKey: String?, limit: Int?) throws(GatewayError) -> [String] {
        try withConnection { link throws(GatewayError) in
            try link.strings(
                """
                SELECT id FROM documents WHERE id >= \(startKey ?? "") AND (\(endKey)::text IS NULL OR id <= \(endKey))
                ORDER BY id LIMIT \(limit.map { Int64($0) })
                """)
        }
    }

    public func liveDocumentIDs(in range: DocumentIDRange, limit: Int?) throws(GatewayError) -> [String] {
        try withConnection { link throws(GatewayError) in try link.strings(Self.liveDocumentsQuery(in: range, limit: limit)) }
    }

    public func liveDocumentIDs(
        inChannels channels: Set<String>, in range: DocumentIDRange, limit: Int?
    ) throws(GatewayError) -> [String] {
        guard !channels.isEmpty else { return [] }
        return try withConnection { link throws(GatewayError) in
            try link.strings(Self.liveDocumentsQuery(inChannels: channels, in: range, limit: limit))
        }
    }

    /// ``GatewayStorage/fetchLiveDocumentIDs(inChannels:in:limit:)`` holding no thread while it waits for a
    /// connection or for PostgreSQL's answer.
    public func fetchLiveDocumentIDs(
        inChannels channels: Set<String>?, in range: DocumentIDRange, limit: Int?
    ) async throws(GatewayError) -> [String] {
        if channels?.isEmpty == true { return [] }
        let query =
            if let channels { Self.liveDocumentsQuery(inChannels: channels, in: range, limit: limit) } else {
                Self.liveDocumentsQuery(in: range, limit: limit)
            }
        return try await withConnection { link async throws(GatewayError) in try await link.strings(query) }
    }

    /// The operators and the order are the statement's text (constants, never input): with the bounds' NULL tests
    /// folded at bind time (an unnamed statement is planned with its parameters), each bound is an index range, and
    /// a page starting at `startkey` does not walk the key from its beginning.
    private static func liveDocumentsQuery(in range: DocumentIDRange, limit: Int?) -> PostgresQuery {
        let (lowerKey, upperKey, limit) = (range.lowerBound?.key, range.upperBound?.key, limit.map { Int64($0) })
        let (lowerOperator, upperOperator, order) = (range.lowerOperator, range.upperOperator, range.sqlOrder)
        return """
            SELECT id FROM documents WHERE NOT deleted
            AND (\(lowerKey)::text IS NULL OR id \(unescaped: lowerOperator) \(lowerKey))
            AND (\(upperKey)::text IS NULL OR id \(unescaped: upperOperator) \(upperKey))
            ORDER BY id \(unescaped: order) LIMIT \(limit)
            """
    }

    /// One statement: for each channel, a branch walking its live documents' rows from the start key on in ID order
    /// (an index range of `channel_changes_by_document`), the branches merged in order (`Merge Append`), each read
    /// only as far as the merge takes its rows: a page reads its rows plus about one per channel. More channels than
    /// ``ChannelIndex/documentPageChannelLimit`` are read as one index scan of them all, sorted.
    private static func liveDocumentsQuery(
        inChannels channels: Set<String>, in range: DocumentIDRange, limit: Int?
    ) -> PostgresQuery {
        let (lowerKey, upperKey, limit) = (range.lowerBound?.key, range.upperBound?.key, limit.map { Int64($0) })
        let (lowerOperator, upperOperator, order) = (range.lowerOperator, range.upperOperator, range.sqlOrder)
        var query = PostgresQuery.StringInterpolation(literalCapacity: 512, interpolationCount: 4 * channels.count)
        query.appendLiteral("SELECT doc_id FROM (")
        let branches = channels.count <= ChannelIndex.documentPageChannelLimit ? channels.sorted().map { [$0] } : [Array(channels)]
        for (index, branch) in branches.enumerated() {
            query.appendLiteral(index == 0 ? "(" : " UNION ALL (")
            // One channel by equality: an index scan for `= ANY` does not give its rows in the index's order, and
            // the branch would sort every row of its channel. A branch of several channels takes each document once
            // (one in two of them has two rows), or its limit would count one twice.
            if let channel = branch.first, branch.count == 1 {
                query.appendLiteral("SELECT c.doc_id FROM channel_changes c JOIN documents d ON d.id = c.doc_id WHERE ")
                query.appendLiteral("c.channel = ")
                query.appendInterpolation(channel)
            } else {
                query.appendLiteral(
                    "SELECT DISTINCT c.doc_id FROM channel_changes c JOIN documents d ON d.id = c.doc_id WHERE ")
                query.appendLiteral("c.channel = ANY(")
                query.appendInterpolation(branch)
                query.appendLiteral(")")
            }
            query.appendLiteral(" AND NOT c.removed AND NOT d.deleted AND (")
            query.appendInterpolation(lowerKey)
            query.appendLiteral("::text IS NULL OR c.doc_id \(lowerOperator) ")
            query.appendInterpolation(lowerKey)
            query.appendLiteral(") AND (")
            query.appendInterpolation(upperKey)
            query.appendLiteral("::text IS NULL OR c.doc_id \(upperOperator) ")
            query.appendInterpolation(upperKey)
            query.appendLiteral(") ORDER BY c.doc_id \(order) LIMIT ")
            query.appendInterpolation(limit)
            query.appendLiteral(")")
        }
        query.appendLiteral(") AS page GROUP BY doc_id ORDER BY doc_id \(order) LIMIT ")
        query.appendInterpolation(limit)
        return PostgresQuery(stringInterpolation: query)
    }

    static func revision(_ text: String) throws(GatewayError) -> RevisionID {
        do { return try RevisionID(parsing: text) } catch {
            throw .internalError("A stored revision ID is corrupt: \(text)")
        }
    }

    // MARK: - Local documents

    public func localDocument(id: String) throws(GatewayError) -> (revision: String, body: JSONValue)? {
        try Self.decodeLocalDocument(
            try withConnection { link throws(GatewayError) in try link.query(Self.localDocumentQuery(id)) }, id: id)
    }

    /// ``localDocument(id:)``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchLocalDocument(id: String) async throws(GatewayError) -> (revision: String, body: JSONValue)? {
        return try await withConnection { link async throws(GatewayError) in
            try Self.decodeLocalDocument(try await link.query(Self.localDocumentQuery(id)), id: id)
        }
    }

    private static func localDocumentQuery(_ id: String) -> PostgresQuery {
        "SELECT rev, body FROM local_documents WHERE id = \(id)"
    }

    private static func decodeLocalDocument(_ result: PostgresQueryResult, id: String) throws(GatewayError)
        -> (revision: String, body: JSONValue)?
    {
        guard let row = result.rows.first else { return nil }
        let (rev, body) = try PostgresLink.decode(row, as: (String, ByteBuffer).self)
        do { return (rev, try JSONValue(parsing: body.bytes)) } catch {
            throw .internalError("A stored local document is corrupt: \(id)")
        }
    }

    public func putLocalDocument(id: String, body: JSONValue, expectedRevision: String?) throws(GatewayError)
        -> String
    {
        let (query, revision) = Self.localDocumentWrite(id: id, body: body, expectedRevision: expectedRevision)
        let changed = try withConnection { link throws(GatewayError) in try link.rowsChanged(by: query) }
        guard changed == 1 else { throw .conflict("Document update conflict") }
        return revision
    }

    /// ``putLocalDocument(id:body:expectedRevision:)``, holding no thread while it waits for a connection or for
    /// PostgreSQL's answer.
    public func submitLocalDocument(id: String, body: JSONValue, expectedRevision: String?) async throws(GatewayError)
        -> String
    {
        let (query, revision) = Self.localDocumentWrite(id: id, body: body, expectedRevision: expectedRevision)
        let changed = try await withConnection { link async throws(GatewayError) in
            try await link.query(query).metadata.rows ?? 0
        }
        guard changed == 1 else { throw .conflict("Document update conflict") }
        return revision
    }

    /// The one statement storing a local document, either way, so two nodes saving the same checkpoint cannot both
    /// succeed; and the revision it stores.
    private static func localDocumentWrite(id: String, body: JSONValue, expectedRevision: String?)
        -> (PostgresQuery, String)
    {
        let number = expectedRevision.flatMap { Int($0.split(separator: "-").last ?? "") } ?? 0
        let revision = "0-\(number + 1)"
        let data = body.serialized().byteBuffer
        if let expectedRevision {
            return (
                """
                UPDATE local_documents SET rev = \(revision), body = \(data)
                WHERE id = \(id) AND rev = \(expectedRevision)
                """, revision
            )
        }
        return (
            "INSERT INTO local_documents (id, rev, body) VALUES (\(id), \(revision), \(data)) ON CONFLICT DO NOTHING",
            revision
        )
    }

    public func deleteLocalDocument(id: String, expectedRevision: String?) throws(GatewayError) {
        let deleted = try withConnection { link throws(GatewayError) in
            try link.rowsChanged(by: Self.localDocumentDeletion(id: id, expectedRevision: expectedRevision))
        }
        guard deleted == 0 else { return }
        guard try localDocument(id: id) != nil else { throw .notFound("missing") }
        throw .conflict("Document update conflict")
    }

    /// ``deleteLocalDocument(id:expectedRevision:)``, holding no thread while it waits for a connection or for
    /// PostgreSQL's answers.
    public func submitLocalDocumentDeletion(id: String, expectedRevision: String?) async throws(GatewayError) {
        let deleted = try await withConnection { link async throws(GatewayError) in
            try await link.query(Self.localDocumentDeletion(id: id, expectedRevision: expectedRevision)).metadata.rows
                ?? 0
        }
        guard deleted == 0 else { return }
        guard try await fetchLocalDocument(id: id) != nil else { throw .notFound("missing") }
        throw .conflict("Document update conflict")
    }

    private static func localDocumentDeletion(id: String, expectedRevision: String?) -> PostgresQuery {
        "DELETE FROM local_documents WHERE id = \(id) AND (\(expectedRevision)::text IS NULL OR rev = \(expectedRevision))"
    }

    // MARK: - Attachments

    public func attachment(digest: String) throws(GatewayError) -> [UInt8]? {
        try Self.decodeAttachment(try withConnection { link throws(GatewayError) in try link.query(Self.attachmentQuery(digest)) })
    }

    /// ``attachment(digest:)``, holding no thread while it waits for a connection or for PostgreSQL's answer.
    public func fetchAttachment(digest: String) async throws(GatewayError) -> [UInt8]? {
        return try await withConnection { link async throws(GatewayError) in
            try Self.decodeAttachment(try await link.query(Self.attachmentQuery(digest)))
        }
    }

    private static func attachmentQuery(_ digest: String) -> PostgresQuery {
        "SELECT data FROM attachments WHERE digest = \(digest)"
    }

    private static func decodeAttachment(_ result: PostgresQueryResult) throws(GatewayError) -> [UInt8]? {
        guard let row = result.rows.first else { return nil }
        return try PostgresLink.decode(row, as: ByteBuffer.self).bytes
    }

    @discardableResult
    public func putAttachment(_ data: [UInt8]) throws(GatewayError) -> String {
        let digest = AttachmentDigest.sha1(of: data).description
        try withConnection { link throws(GatewayError) in
            try link.query(
                "INSERT INTO attachments (digest, data) VALUES (\(digest), \(data.byteBuffer)) ON CONFLICT DO NOTHING")
        }
        return digest
    }
}
