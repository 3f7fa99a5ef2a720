import CouchetteCore
import NIOCore
import PostgresNIO

// MARK: - Maintenance

/// Compaction, sizes and the storage's UUID in PostgreSQL (spec: gateway-rest-api.md §3, §16).
extension PostgresGatewayStorage {
    /// Drops the bodies of non-leaf revisions and empties tombstone bodies; rows keep their sequences, so compaction
    /// never shows in a changes feed. It reads and rewrites the documents in slices by sequence (memory and each
    /// statement stay bounded), and rewrites a document only if it is still the one compacted (its sequence
    /// unchanged): a write on any node meanwhile wins, and the document is compacted next time.
    public func compact() throws(GatewayError) -> Int {
        var removed = 0
        var after: Int64 = 0
        while true {
            let (count, last) = try withConnection { link throws(GatewayError) -> (Int, Int64?) in
                var removedBy: [String: Int] = [:]
                var ids: [String] = []
                var sequences: [Int64] = []
                var bodies: [ByteBuffer] = []
                var metadata: [ByteBuffer] = []
                var last: Int64?
                let rows = try link.query(
                    """
                    SELECT id, sequence, body, metadata FROM documents WHERE sequence > \(after)
                    ORDER BY sequence LIMIT \(Int64(SQLiteGatewayStorage.compactionSlice))
                    """)
                for row in rows.rows {
                    let (id, sequence, body, meta) = try PostgresLink.decode(
                        row, as: (String, Int64, ByteBuffer, ByteBuffer).self)
                    last = sequence
                    var document = try Self.decodeDocument(id: id, sequence: sequence, body: body, metadata: meta)
                    let count = SQLiteGatewayStorage.compact(&document.tree)
                    guard count > 0, let winner = document.tree.winner else { continue }
                    removedBy[id] = count
                    ids.append(id)
                    sequences.append(sequence)
                    bodies.append((winner.body ?? .object([:])).serialized().byteBuffer)
                    metadata.append(StoredDocumentCodec.encodeMetadata(document).byteBuffer)
                }
                guard !ids.isEmpty else { return (0, last) }
                let compacted = try link.strings(
                    """
                    UPDATE documents d SET body = c.body, metadata = c.metadata
                    FROM unnest(\(ids)::text[], \(sequences)::bigint[], \(bodies)::bytea[], \(metadata)::bytea[])
                        AS c(id, sequence, body, metadata)
                    WHERE d.id = c.id AND d.sequence = c.sequence
                    RETURNING d.id
                    """)
                return (compacted.reduce(0) { $0 + (removedBy[$1] ?? 0) }, last)
            }
            removed += count
            guard let last else { return removed }
            after = last
        }
    }

    public var storageUUID: String {
        get throws(GatewayError) {
            try withConnection { link throws(GatewayError) in
                guard let row = try link.query("SELECT value FROM meta WHERE key = 'uuid'").rows.first else {
                    throw .internalError("PostgreSQL storage: the UUID is missing")
                }
                return try PostgresLink.decode(row, as: String.self)
            }
        }
    }

    public var statistics: StorageStatistics {
        get throws(GatewayError) {
            try withConnection { link throws(GatewayError) in
                try Self.statistics(
                    totals: try link.query(Self.totalsQuery), size: try link.query(Self.sizeQuery(schema)))
            }
        }
    }

    /// ``statistics``, holding no thread while it waits for a connection or for PostgreSQL's answers.
    public func fetchStatistics() async throws(GatewayError) -> StorageStatistics {
        return try await withConnection { link async throws(GatewayError) in
            try Self.statistics(
                totals: try await link.query(Self.totalsQuery), size: try await link.query(Self.sizeQuery(schema)))
        }
    }

    private static var totalsQuery: PostgresQuery { PostgresQuery(unsafeSQL: PostgresDocumentTotals.query) }

    private static func sizeQuery(_ schema: String) -> PostgresQuery {
        """
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = \(schema) AND c.relkind = 'r'
        """
    }

    private static func statistics(totals: PostgresQueryResult, size: PostgresQueryResult) throws(GatewayError)
        -> StorageStatistics
    {
        var statistics = StorageStatistics()
        if let row = totals.rows.first {
            let (live, deleted, external) = try PostgresLink.decode(row, as: (Int64, Int64, Int64).self)
            statistics.documentCount = Int(live)
            statistics.deletedDocumentCount = Int(deleted)
            statistics.externalSize = Int(external)
        }
        if let row = size.rows.first {
            let bytes = Int(try PostgresLink.decode(row, as: Int64.self))
            statistics.fileSize = bytes
            statistics.activeSize = bytes
        }
        return statistics
    }

    // MARK: - Stored values

    public func storedValue(_ key: String) throws(GatewayError) -> String? {
        try withConnection { link throws(GatewayError) in
            try link.strings("SELECT value FROM meta WHERE key = \("value:" + key)").first
        }
    }

    public func storeValue(_ value: String, forKey key: String) throws(GatewayError) {
        try withConnection { link throws(GatewayError) in
            _ = try link.query(
                "INSERT INTO meta (key, value) VALUES (\("value:" + key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        }
    }

    // MARK: - Channels

    public func channelCounts() throws(GatewayError) -> [ChannelCount] {
        try withConnection { link throws(GatewayError) in
            let rows = try link.query(
                "SELECT channel, count(*) FROM channel_changes WHERE NOT removed GROUP BY channel ORDER BY channel")
            var counts: [ChannelCount] = []
            for row in rows.rows {
                let (channel, count) = try PostgresLink.decode(row, as: (String, Int64).self)
                counts.append(ChannelCount(channel: channel, documents: Int(count)))
            }
            return counts
        }
    }
}
