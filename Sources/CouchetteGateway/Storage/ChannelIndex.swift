import CouchetteCore
import CouchetteSQLite

// MARK: - ChannelIndex

/// The `channel_changes` table of ``SQLiteGatewayStorage``, behind channel-filtered `_changes` feeds: the rows
/// ``IndexChanges`` works out, one per document and channel it is in or has left.
///
/// Rows are keyed by channel then sequence, so a feed reads a range per channel and a write appends to each
/// channel's rows.
enum ChannelIndex {
    /// The table (schema version 3).
    static let createTable = """
        CREATE TABLE channel_changes (
            channel TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            doc_id TEXT NOT NULL,
            removed INTEGER NOT NULL,
            PRIMARY KEY (channel, sequence)
        ) WITHOUT ROWID;
        """

    /// The index by sequence (schema version 5): a feed of a user with many channels reads the changes after its
    /// position in order instead of one range per channel.
    static let createSequenceIndex = "CREATE INDEX IF NOT EXISTS channel_changes_by_sequence ON channel_changes (sequence)"

    /// The index by channel and document (schema version 7): a user's `_all_docs` page reads each of their channels'
    /// rows from its start key on, in ID order, and stops at its limit.
    static let createDocumentIndex =
        "CREATE INDEX IF NOT EXISTS channel_changes_by_document ON channel_changes (channel, doc_id)"

    /// Above this many channels PostgreSQL reads a user's `_all_docs` page as one branch of them all, not one branch
    /// per channel (a statement of that many branches is planned at each request).
    static let documentPageChannelLimit = 64

    /// Above this many channels SQLite reads a user's `_all_docs` page from the channels' feeds: below, one statement
    /// per channel, each positioned by one index seek (~10 µs), costs less than reading the channels whole.
    static let documentMergeChannelLimit = 256

    /// The IDs of live documents in any of `channels`, in `range`, in its order, at most `limit`: one statement per
    /// channel walks its rows in ID order through ``createDocumentIndex``, and the walks are merged as they go, each
    /// stepped only when its current ID is taken. A page reads its rows plus one per channel, whatever the channels
    /// hold.
    static func liveDocumentIDs(
        inChannels channels: Set<String>, in range: DocumentIDRange, limit: Int, _ connection: Connection
    ) throws -> [String] {
        let (bounds, keys) = range.conditions(on: "c.doc_id")
        let sql = """
            SELECT c.doc_id FROM channel_changes c JOIN documents d ON d.id = c.doc_id
            WHERE \((["c.channel = ?", "c.removed = 0", "d.deleted = 0"] + bounds).joined(separator: " AND "))
            ORDER BY c.doc_id \(range.sqlOrder) LIMIT ?
            """
        // Each walk's current ID; a walk that ends leaves.
        var walks: [(id: String, statement: Statement)] = []
        for channel in channels {
            let statement = try connection.makeStatement(sql: sql)
            try statement.bind(arguments: [channel] + keys + [Int64(limit)])
            if try statement.step() { walks.append((statement.string(at: 0), statement)) }
        }
        // IDs compare as their UTF-8 bytes, as SQLite orders them.
        func comesFirst(_ a: String, _ b: String) -> Bool {
            range.descending ? b.utf8.lexicographicallyPrecedes(a.utf8) : a.utf8.lexicographicallyPrecedes(b.utf8)
        }
        var ids: [String] = []
        while ids.count < limit, let next = walks.map(\.id).min(by: comesFirst) {
            ids.append(next)
            // Every walk at this ID (a document in several of the channels) moves on.
            var index = 0
            while index < walks.count {
                guard walks[index].id.utf8.elementsEqual(next.utf8) else {
                    index += 1
                    continue
                }
                if try walks[index].statement.step() {
                    walks[index].id = walks[index].statement.string(at: 0)
                    index += 1
                } else {
                    walks.remove(at: index)
                }
            }
        }
        return ids
    }

    /// Above this many channels a feed reads by sequence (``changesBySequence(inChannels:since:limit:_:)``): its
    /// cost then follows the changes after its position, not the channel count (and no statement binds more
    /// parameters than SQLite allows).
    static let channelListLimit = 256

    /// The entries of the documents with rows in `channels` after `since`, as the per-channel query gives them —
    /// per document its latest row's sequence, whether any of its rows says it is still in one of the channels, and
    /// otherwise the channels it left — read in sequence order through the sequence index.
    ///
    /// A document's rows are never after its own sequence, so its entry is final once the scan passes that sequence;
    /// entries are released in order of their sequence as soon as no unfinished entry could still come before them,
    /// and the scan stops once `limit` are released.
    static func changesBySequence(
        inChannels channels: Set<String>, since: UInt64, limit: Int?, _ connection: Connection
    ) throws -> [ChangeEntry] {
        struct Pending {
            var sequence: UInt64
            var documentSequence: UInt64
            var stillIn: Bool
            var removed: Set<String>
            var revision: String
            var deleted: Bool
        }
        var pending: [String: Pending] = [:]
        var released: [ChangeEntry] = []
        var cursor: (sequence: Int64, channel: String) = (Int64(clamping: since), "")
        let pageSize = 2_000

        func release(through scanned: UInt64) throws {
            // Unfinished entries (their document's sequence not reached) may still move later: release only the
            // finished ones that come before every unfinished one.
            let floor = pending.values.filter { $0.documentSequence > scanned }.map(\.sequence).min() ?? .max
            let ready = pending.filter { $0.value.documentSequence <= scanned && $0.value.sequence < floor }
                .sorted { $0.value.sequence < $1.value.sequence }
            for (id, entry) in ready {
                if let limit, released.count >= limit { return }
                pending[id] = nil
                released.append(
                    ChangeEntry(
                        sequence: entry.sequence, documentID: id, revisionID: try RevisionID(parsing: entry.revision),
                        isDeleted: entry.deleted, removedFrom: entry.stillIn ? [] : entry.removed))
            }
        }

        while true {
            var rows = 0
            var lastSequence = UInt64(cursor.sequence)
            try connection.forEachRow(
                """
                SELECT m.sequence, m.channel, m.doc_id, m.removed, d.sequence, d.rev, d.deleted
                FROM channel_changes m INDEXED BY channel_changes_by_sequence JOIN documents d ON d.id = m.doc_id
                WHERE (m.sequence, m.channel) > (?, ?) AND m.sequence > ?
                ORDER BY m.sequence, m.channel
                LIMIT ?
                """, cursor.sequence, cursor.channel, Int64(clamping: since), Int64(pageSize)
            ) { row in
                rows += 1
                let sequence = row.int64(at: 0)
                let channel = row.string(at: 1)
                cursor = (sequence, channel)
                lastSequence = UInt64(sequence)
                guard channels.contains(channel) else { return }
                let id = row.string(at: 2)
                let removed = row.bool(at: 3)
                var entry =
                    pending[id]
                    ?? Pending(
                        sequence: 0, documentSequence: UInt64(row.int64(at: 4)), stillIn: false, removed: [],
                        revision: row.string(at: 5), deleted: row.bool(at: 6))
                entry.sequence = max(entry.sequence, UInt64(sequence))
                if removed { entry.removed.insert(channel) } else { entry.stillIn = true }
                pending[id] = entry
            }
            let exhausted = rows < pageSize
            // Rows of `lastSequence` may continue on the next page: everything before it is complete.
            try release(through: exhausted ? .max : lastSequence - 1)
            if exhausted { return released }
            if let limit, released.count >= limit { return released }
        }
    }

    /// Writes a transaction's channel rows, one statement each.
    ///
    /// A row per statement, not multi-row `INSERT`s: a statement that can fail after its first row needs a statement
    /// journal, which copies every page it touches first — and channel rows land on pages all over the table (a Todo
    /// task list through `DocumentStore`: ~59.6 → ~56 µs).
    static func write(_ rows: PendingIndexRows, _ connection: Connection) throws {
        for key in rows.deletedChannels { try delete(key.channel, at: key.sequence, connection) }
        let statement = try connection.cachedStatement(
            sql: "INSERT INTO channel_changes (channel, sequence, doc_id, removed) VALUES (?, ?, ?, ?)")
        for row in rows.insertedChannels.values {
            try statement.bind(row.channel, at: 1)
            try statement.bind(Int64(row.sequence), at: 2)
            try statement.bind(row.documentID, at: 3)
            try statement.bind(row.removed, at: 4)
            try statement.execute()
        }
    }

    // MARK: - Rows

    private static func delete(_ channel: String, at sequence: UInt64, _ connection: Connection) throws {
        try connection.execute("DELETE FROM channel_changes WHERE channel = ? AND sequence = ?") { statement in
            try statement.bind(channel, at: 1)
            try statement.bind(Int64(sequence), at: 2)
        }
    }
}
