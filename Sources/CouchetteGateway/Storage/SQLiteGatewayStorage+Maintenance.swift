import CouchetteCore
import CouchetteSQLite
import Foundation

// MARK: - Maintenance

/// Compaction and the storage's UUID (spec: gateway-rest-api.md §3, §16).
extension SQLiteGatewayStorage {
    /// Drops the bodies of non-leaf revisions and empties non-empty tombstone bodies, a slice of documents per
    /// transaction; rows keep their sequences, so compaction never shows in a changes feed, and the document totals
    /// (``DocumentTotals``) follow the bodies it rewrites, so that no request counts the rows again after it.
    ///
    /// - Returns: How many revision bodies were removed.
    /// - Throws: 500 for a corrupt document, 503 when closed.
    public func compact() throws(GatewayError) -> Int {
        // In slices of documents by sequence, each a transaction of its own: the writer (and the storage's lock) is
        // held for one slice at a time, and requests go on between them. Rows keep their sequences; a document a write
        // moved past the scan meanwhile is simply looked at again.
        var removed = 0
        var after: Int64 = 0
        while true {
            let (count, last) = try withConnection { connection in
                totals.begin(atChanges: Self.changeCount(connection))
                do {
                    let slice = try compactSlice(after: after, connection)
                    totals.commit(atChanges: Self.changeCount(connection))
                    return slice
                } catch {
                    totals.rollback(atChanges: Self.changeCount(connection))
                    throw error
                }
            }
            removed += count
            guard let last else { return removed }
            after = last
        }
    }

    /// Compacts the documents of one slice after sequence `after`, in a transaction, recording each rewritten body in
    /// the open ``DocumentTotals`` transaction.
    ///
    /// - Returns: How many bodies were removed, and the slice's last sequence (nil when there was none).
    private func compactSlice(after: Int64, _ connection: Connection) throws -> (Int, Int64?) {
        try connection.transaction { connection -> (Int, Int64?) in
            var rewrites: [(sequence: Int64, body: [UInt8], metadata: [UInt8], deleted: Bool, oldBytes: Int)] = []
            var removed = 0
            var last: Int64?
            try connection.forEachRow(
                """
                SELECT sequence, id, body, metadata, deleted FROM documents WHERE sequence > ?
                ORDER BY sequence LIMIT ?
                """,
                after, Int64(Self.compactionSlice)
            ) { row in
                last = row.int64(at: 0)
                let body = row.blob(at: 2)
                var document = try StoredDocumentCodec.decode(
                    id: row.string(at: 1), sequence: UInt64(row.int64(at: 0)), winnerBody: body,
                    metadata: row.blob(at: 3))
                let count = Self.compact(&document.tree)
                guard count > 0, let winner = document.tree.winner else { return }
                removed += count
                rewrites.append(
                    (
                        Int64(document.sequence), (winner.body ?? .object([:])).serialized(),
                        StoredDocumentCodec.encodeMetadata(document), row.int64(at: 4) != 0, body.count
                    ))
            }
            for rewrite in rewrites {
                try connection.execute(
                    "UPDATE documents SET body = ?, metadata = ? WHERE sequence = ?", rewrite.body, rewrite.metadata,
                    rewrite.sequence)
                totals.recordRemoval(isDeleted: rewrite.deleted, bytes: rewrite.oldBytes)
                totals.recordInsert(isDeleted: rewrite.deleted, bytes: rewrite.body.count)
            }
            return (removed, last)
        }
    }

    /// How many documents compaction reads and rewrites per transaction (both storages).
    static let compactionSlice = 1_000

    /// Removes the bodies compaction drops from one revision tree.
    ///
    /// - Returns: How many bodies were removed or emptied.
    static func compact(_ tree: inout RevisionTree) -> Int {
        var removed = 0
        for node in tree.nodes {
            if !tree.isLeaf(node.id) {
                guard node.body != nil else { continue }
                tree.setBody(nil, of: node.id)
                removed += 1
            } else if node.isDeleted, let body = node.body, body != .object([:]) {
                tree.setBody(.object([:]), of: node.id)
                removed += 1
            }
        }
        return removed
    }

    /// The storage's UUID, made and saved at the first request.
    public var storageUUID: String {
        get throws(GatewayError) {
            try withConnection { connection in
                if let uuid = try connection.firstValue("SELECT value FROM meta WHERE key = 'uuid'")?.stringValue {
                    return uuid
                }
                let uuid = RandomHex.make(bytes: 16)
                try connection.execute("INSERT INTO meta (key, value) VALUES ('uuid', ?)", uuid)
                return uuid
            }
        }
    }

    // MARK: - Stored values

    public func storedValue(_ key: String) throws(GatewayError) -> String? {
        try withConnection { connection in
            try connection.firstValue("SELECT value FROM meta WHERE key = ?", "value:" + key)?.stringValue
        }
    }

    public func storeValue(_ value: String, forKey key: String) throws(GatewayError) {
        try withConnection { connection in
            try connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", "value:" + key, value)
        }
    }

    // MARK: - Channels

    /// Read beside the writer (a reader), so that counting a large index holds no write.
    public func channelCounts() throws(GatewayError) -> [ChannelCount] {
        try withReader { connection in
            if let memoryIndex { return memoryIndex.channels.channelCounts() }
            var counts: [ChannelCount] = []
            try connection.forEachRow(
                "SELECT channel, count(*) FROM channel_changes WHERE removed = 0 GROUP BY channel ORDER BY channel"
            ) { row in counts.append(ChannelCount(channel: row.string(at: 0), documents: Int(row.int64(at: 1)))) }
            return counts
        }
    }
}
