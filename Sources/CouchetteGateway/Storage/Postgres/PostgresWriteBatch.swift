import CouchetteCore
import NIOCore
import PostgresNIO

// MARK: - PostgresWriteBatch

/// What one write transaction of ``PostgresGatewayStorage`` changes, kept in memory until it commits: the
/// sequences it took, the documents it stores or purges, and the index rows they add and remove.
///
/// Rows are netted as they are recorded (a row inserted then deleted in the same batch, as when a `_bulk_docs`
/// request updates a document twice, is never written), then ``flush(_:schema:)`` writes everything in one statement.
final class PostgresWriteBatch {
    /// Sequences taken (``PostgresSequencer/take(_:_:)``) and not used yet, in increasing order.
    private var available: [UInt64] = []
    /// The last sequence used, or nil while none is.
    private(set) var last: UInt64?
    /// Whether the batch took sequences, used or not: it held a ticket, which holds back every node's feeds until it
    /// ends, so its end is announced even when it stores nothing.
    private(set) var tookSequences = false
    /// Documents to store, by ID, as they will be stored.
    var documents: [String: StoredDocument] = [:]
    /// Documents read absent under the batch's locks: stored only if still absent at the flush (another writer may
    /// create them meanwhile, since an absent row cannot be locked).
    var readAbsent: Set<String> = []
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

    /// Whether sequences taken are left.
    var hasSequences: Bool { !available.isEmpty }

    /// Adds sequences taken (by a statement that also read documents).
    func addSequences(_ taken: [Int64]) {
        guard !taken.isEmpty else { return }
        tookSequences = true
        available = (available + taken.map { UInt64($0) }).sorted(by: >)
    }

    /// The next sequence for this batch, taking one more from `sequencer` when the ones taken are used up.
    func nextSequence(_ sequencer: PostgresSequencer, _ link: PostgresLink) throws(GatewayError) -> UInt64 {
        if available.isEmpty {
            available = try sequencer.take(1, link).reversed()
            tookSequences = true
        }
        guard let sequence = available.popLast() else { throw .internalError("PostgreSQL storage: no sequence") }
        last = sequence
        return sequence
    }

    /// Adds a change's index rows, cancelling rows this batch inserted and now deletes.
    func record(_ changes: IndexChanges) {
        indexRows.record(changes)
    }

    /// `SCHEMA LAST`, or `SCHEMA LAST VERSION` when the batch changed the shared settings (LAST, the batch's last
    /// sequence, is a hint: listeners read the stable sequence).
    private func notification(schema: String) -> String {
        [schema, String(last ?? 0)].joined(separator: " ") + (settingsVersion.map { " \($0)" } ?? "")
    }

    /// Writes the batch in one statement: index rows, purges, documents and the notification (which takes effect at
    /// the commit that follows). Deleted index rows never share a key with inserted ones (PostgreSQL has no rebuild),
    /// so the statement's parts may run in any order.
    ///
    /// - Throws: A transient failure (the transaction runs again) when a document read absent was created meanwhile.
    func flush(_ link: PostgresLink, schema: String) throws(GatewayError) {
        guard tookSequences || !purged.isEmpty || settingsVersion != nil else { return }
        let deletedChannels = Array(indexRows.deletedChannels)
        let insertedChannels = Array(indexRows.insertedChannels.values)
        let deletedGrants = Array(indexRows.deletedGrants)
        let insertedGrants = Array(indexRows.insertedGrants.values)
        var columns = DocumentColumns()
        var created = DocumentColumns()
        // In ID order: two batches creating the same documents wait for each other in one order.
        for document in documents.values.sorted(by: { $0.id < $1.id }) {
            if readAbsent.contains(document.id) { created.append(document) } else { columns.append(document) }
        }
        let result = try link.query(
            """
            WITH deleted_channels AS (
                DELETE FROM channel_changes c
                USING unnest(\(deletedChannels.map(\.channel))::text[], \(deletedChannels.map { Int64($0.sequence) })::bigint[]) AS d(channel, sequence)
                WHERE c.channel = d.channel AND c.sequence = d.sequence
            ), inserted_channels AS (
                INSERT INTO channel_changes (channel, sequence, doc_id, removed)
                SELECT * FROM unnest(\(insertedChannels.map(\.channel))::text[], \(insertedChannels.map { Int64($0.sequence) })::bigint[],
                    \(insertedChannels.map(\.documentID))::text[], \(insertedChannels.map(\.removed))::boolean[])
            ), deleted_grants AS (
                DELETE FROM grants g USING unnest(\(deletedGrants.map(\.grant.principal))::text[], \(deletedGrants.map { Int16($0.grant.kind.rawValue) })::smallint[],
                    \(deletedGrants.map { Int64($0.sequence) })::bigint[], \(deletedGrants.map(\.grant.target))::text[]) AS d(principal, kind, sequence, target)
                WHERE g.principal = d.principal AND g.kind = d.kind AND g.sequence = d.sequence AND g.target = d.target
            ), inserted_grants AS (
                INSERT INTO grants (principal, kind, sequence, target, doc_id)
                SELECT * FROM unnest(\(insertedGrants.map(\.grant.principal))::text[], \(insertedGrants.map { Int16($0.grant.kind.rawValue) })::smallint[],
                    \(insertedGrants.map { Int64($0.sequence) })::bigint[], \(insertedGrants.map(\.grant.target))::text[], \(insertedGrants.map(\.documentID))::text[])
            ), purged AS (
                DELETE FROM documents WHERE id = ANY(\(Array(purged)))
            ), updated AS (
                INSERT INTO documents (id, sequence, deleted, rev, body, metadata, expiry)
                SELECT i, s, d, r, b, m, NULLIF(e, 'NaN'::float8)
                FROM unnest(\(columns.ids)::text[], \(columns.sequences)::bigint[], \(columns.deleted)::boolean[], \(columns.revisions)::text[],
                    \(columns.bodies)::bytea[], \(columns.metadata)::bytea[], \(columns.expiries)::float8[]) AS u(i, s, d, r, b, m, e)
                ON CONFLICT (id) DO UPDATE SET sequence = excluded.sequence, deleted = excluded.deleted,
                    rev = excluded.rev, body = excluded.body, metadata = excluded.metadata, expiry = excluded.expiry
            ), created AS (
                INSERT INTO documents (id, sequence, deleted, rev, body, metadata, expiry)
                SELECT i, s, d, r, b, m, NULLIF(e, 'NaN'::float8)
                FROM unnest(\(created.ids)::text[], \(created.sequences)::bigint[], \(created.deleted)::boolean[], \(created.revisions)::text[],
                    \(created.bodies)::bytea[], \(created.metadata)::bytea[], \(created.expiries)::float8[]) AS u(i, s, d, r, b, m, e)
                ON CONFLICT (id) DO NOTHING
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM created), pg_notify('couchette', \(notification(schema: schema)))
            """)
        let createdCount = try result.rows.first.map { row throws(GatewayError) in
            try PostgresLink.decode(row, as: (Int64, String).self).0
        }
        guard createdCount == Int64(created.ids.count) else {
            // Another writer created one of them after this batch read it absent: run the batch again.
            link.noteTransientFailure()
            throw .conflict("Document update conflict")
        }
    }
}

// MARK: - DocumentColumns

/// Documents as the columns of an `unnest` insert.
private struct DocumentColumns {
    var ids: [String] = []
    var sequences: [Int64] = []
    var deleted: [Bool] = []
    var revisions: [String] = []
    var bodies: [ByteBuffer] = []
    var metadata: [ByteBuffer] = []
    /// NaN: none (arrays of optionals do not bind).
    var expiries: [Double] = []

    mutating func append(_ document: StoredDocument) {
        guard let winner = document.tree.winner else { return }
        ids.append(document.id)
        sequences.append(Int64(document.sequence))
        deleted.append(winner.isDeleted)
        revisions.append(winner.id.description)
        bodies.append((winner.body ?? .object([:])).serialized().byteBuffer)
        metadata.append(StoredDocumentCodec.encodeMetadata(document).byteBuffer)
        expiries.append(document.expiry?.timeIntervalSince1970 ?? .nan)
    }
}
