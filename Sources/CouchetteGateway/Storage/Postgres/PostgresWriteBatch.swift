import CouchetteCore
import NIOCore
import PostgresNIO

// MARK: - PostgresWriteBatch

/// What one write transaction of ``PostgresGatewayStorage`` changes, kept in memory until it commits: the
/// sequences it took, the documents it stores or purges, and the index rows they add and remove.
///
/// Rows are netted as they are recorded (a row inserted then deleted in the same batch, as when a `_bulk_docs`
/// request updates a document twice, is never written), then ``flush(_:schema:)`` writes everything in at most
/// seven statements.
final class PostgresWriteBatch {
    /// The last sequence taken (the counter's value when the transaction started, plus what it allocated).
    var last: UInt64
    /// The counter's value when the transaction started.
    let first: UInt64
    /// Documents to store, by ID, as they will be stored.
    var documents: [String: StoredDocument] = [:]
    /// Documents to delete (purge).
    var purged: Set<String> = []
    /// The version of the shared settings this batch stores, if it does.
    var settingsVersion: UInt64?
    /// Documents read under the batch's lock before its updates (`.some(nil)`: absent).
    var prefetched: [String: StoredDocument?] = [:]

    /// The index rows, netted as they are recorded.
    private var indexRows = PendingIndexRows()

    /// The document as this batch knows it: as it will store it, `.some(nil)` when it purges it, as it prefetched
    /// it; nil when the batch has to read it.
    func known(_ id: String) -> StoredDocument?? {
        if let document = documents[id] { return .some(document) }
        if purged.contains(id) { return .some(nil) }
        return prefetched[id]
    }

    init(last: UInt64) {
        self.last = last
        self.first = last
    }

    /// Adds a change's index rows, cancelling rows this batch inserted and now deletes.
    func record(_ changes: IndexChanges) {
        indexRows.record(changes)
    }

    /// `SCHEMA LAST`, or `SCHEMA LAST VERSION` when the batch changed the shared settings.
    private func notification(schema: String) -> String {
        [schema, String(last)].joined(separator: " ") + (settingsVersion.map { " \($0)" } ?? "")
    }

    /// Writes the batch: index rows, purges, documents, then the counter and the notification (both take effect
    /// at the commit that follows).
    func flush(_ link: PostgresLink, schema: String) throws(GatewayError) {
        guard last != first || !purged.isEmpty || settingsVersion != nil else { return }
        if !indexRows.deletedChannels.isEmpty {
            let keys = Array(indexRows.deletedChannels)
            try link.query(
                """
                DELETE FROM channel_changes c USING unnest(\(keys.map(\.channel))::text[], \(keys.map { Int64($0.sequence) })::bigint[]) AS d(channel, sequence)
                WHERE c.channel = d.channel AND c.sequence = d.sequence
                """)
        }
        if !indexRows.insertedChannels.isEmpty {
            let rows = Array(indexRows.insertedChannels.values)
            try link.query(
                """
                INSERT INTO channel_changes (channel, sequence, doc_id, removed)
                SELECT * FROM unnest(\(rows.map(\.channel))::text[], \(rows.map { Int64($0.sequence) })::bigint[],
                    \(rows.map(\.documentID))::text[], \(rows.map(\.removed))::boolean[])
                """)
        }
        if !indexRows.deletedGrants.isEmpty {
            let keys = Array(indexRows.deletedGrants)
            try link.query(
                """
                DELETE FROM grants g USING unnest(\(keys.map(\.grant.principal))::text[], \(keys.map { Int16($0.grant.kind.rawValue) })::smallint[],
                    \(keys.map { Int64($0.sequence) })::bigint[], \(keys.map(\.grant.target))::text[]) AS d(principal, kind, sequence, target)
                WHERE g.principal = d.principal AND g.kind = d.kind AND g.sequence = d.sequence AND g.target = d.target
                """)
        }
        if !indexRows.insertedGrants.isEmpty {
            let rows = Array(indexRows.insertedGrants.values)
            try link.query(
                """
                INSERT INTO grants (principal, kind, sequence, target, doc_id)
                SELECT * FROM unnest(\(rows.map(\.grant.principal))::text[], \(rows.map { Int16($0.grant.kind.rawValue) })::smallint[],
                    \(rows.map { Int64($0.sequence) })::bigint[], \(rows.map(\.grant.target))::text[], \(rows.map(\.documentID))::text[])
                """)
        }
        let purgedIDs = purged
        if !purgedIDs.isEmpty {
            try link.query("DELETE FROM documents WHERE id = ANY(\(Array(purgedIDs)))")
        }
        if !documents.isEmpty {
            let stored = Array(documents.values)
            var ids: [String] = []
            var sequences: [Int64] = []
            var deleted: [Bool] = []
            var revisions: [String] = []
            var bodies: [ByteBuffer] = []
            var metadata: [ByteBuffer] = []
            var expiries: [Double] = []  // NaN: none (arrays of optionals do not bind)
            for document in stored {
                guard let winner = document.tree.winner else { continue }
                ids.append(document.id)
                sequences.append(Int64(document.sequence))
                deleted.append(winner.isDeleted)
                revisions.append(winner.id.description)
                bodies.append((winner.body ?? .object([:])).serialized().byteBuffer)
                metadata.append(StoredDocumentCodec.encodeMetadata(document).byteBuffer)
                expiries.append(document.expiry?.timeIntervalSince1970 ?? .nan)
            }
            try link.query(
                """
                INSERT INTO documents (id, sequence, deleted, rev, body, metadata, expiry)
                SELECT i, s, d, r, b, m, NULLIF(e, 'NaN'::float8)
                FROM unnest(\(ids)::text[], \(sequences)::bigint[], \(deleted)::boolean[], \(revisions)::text[],
                    \(bodies)::bytea[], \(metadata)::bytea[], \(expiries)::float8[]) AS u(i, s, d, r, b, m, e)
                ON CONFLICT (id) DO UPDATE SET sequence = excluded.sequence, deleted = excluded.deleted,
                    rev = excluded.rev, body = excluded.body, metadata = excluded.metadata, expiry = excluded.expiry
                """)
        }
        if last != first || settingsVersion != nil {
            // The notification goes out once the transaction commits.
            try link.query(
                """
                WITH advanced AS (UPDATE counter SET last = \(Int64(last)) WHERE id = 1)
                SELECT pg_notify('couchette', \(notification(schema: schema)))
                """)
        }
    }
}
