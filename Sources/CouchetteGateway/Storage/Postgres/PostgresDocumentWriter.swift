import CouchetteCore
import NIOCore
import PostgresNIO

// MARK: - PostgresDocumentWriter

/// Stores writes prepared outside any lock (``EncodedWrite``: rows worked out against the document they were computed
/// on) in one statement, `store_documents`: one round trip for a `PUT` or a whole `_bulk_docs` batch, where a
/// transaction (`BEGIN`, a locking read, the rows, `COMMIT`) takes four.
///
/// The function locks the documents that exist, in ID order, and inserts new documents and attachments in key order
/// (two writers creating the same ones wait for each other rather than deadlock; a deadlock left is run again); a write whose document is no longer the one it was
/// computed on (its sequence moved, or another writer created it meanwhile) is left out and reported as such (0),
/// for the caller to compute again on the latest document; the others take their sequences
/// (``PostgresSequencer``, ticket included), and their documents, index rows and attachments are written, rows at the
/// pending sequence (``EncodedWrite/pendingSequence``, sent as 0) at their document's. Outside a transaction the
/// statement commits by itself.
struct PostgresDocumentWriter {
    /// The function the migration (re)creates in each schema.
    static let function = """
        CREATE OR REPLACE FUNCTION store_documents(
            tag BIGINT, notice TEXT,
            doc_ids TEXT[], doc_expected BIGINT[], doc_deleted BOOLEAN[], doc_revs TEXT[], doc_bodies BYTEA[],
            doc_metadata BYTEA[], doc_expiries FLOAT8[],
            ch_docs INTEGER[], ch_names TEXT[], ch_sequences BIGINT[], ch_removed BOOLEAN[],
            unch_docs INTEGER[], unch_names TEXT[], unch_sequences BIGINT[],
            gr_docs INTEGER[], gr_principals TEXT[], gr_kinds SMALLINT[], gr_sequences BIGINT[], gr_targets TEXT[],
            ungr_docs INTEGER[], ungr_principals TEXT[], ungr_kinds SMALLINT[], ungr_sequences BIGINT[], ungr_targets TEXT[],
            att_docs INTEGER[], att_digests TEXT[], att_data BYTEA[]
        ) RETURNS BIGINT[] LANGUAGE plpgsql AS $$
        DECLARE
            total INTEGER := coalesce(array_length(doc_ids, 1), 0);
            stored_at BIGINT[];
            taken BIGINT[];
            used INTEGER := 0;
            created TEXT[];
        BEGIN
            IF total = 0 THEN RETURN '{}'; END IF;
            -- The documents that exist, locked; a write still applies if its document is the one it was computed on.
            PERFORM 1 FROM documents WHERE id = ANY(doc_ids) ORDER BY id FOR UPDATE;
            stored_at := ARRAY(
                SELECT CASE WHEN coalesce(d.sequence, 0) = u.was THEN -1 ELSE 0 END
                FROM unnest(doc_ids, doc_expected) WITH ORDINALITY AS u(doc_id, was, ord)
                LEFT JOIN documents d ON d.id = u.doc_id ORDER BY u.ord);
            taken := take_sequences((SELECT count(*) FROM unnest(stored_at) AS s(v) WHERE s.v = -1)::INTEGER, tag);
            FOR i IN 1..total LOOP
                IF stored_at[i] = -1 THEN
                    used := used + 1;
                    stored_at[i] := taken[used];
                END IF;
            END LOOP;
            UPDATE documents d SET sequence = stored_at[u.ord::INTEGER], deleted = u.del, rev = u.rev, body = u.body,
                metadata = u.meta, expiry = NULLIF(u.exp, 'NaN'::FLOAT8)
            FROM unnest(doc_ids, doc_expected, doc_deleted, doc_revs, doc_bodies, doc_metadata, doc_expiries)
                WITH ORDINALITY AS u(doc_id, was, del, rev, body, meta, exp, ord)
            WHERE d.id = u.doc_id AND u.was > 0 AND stored_at[u.ord::INTEGER] > 0;
            -- New documents, unless another writer created them meanwhile (then they are computed again).
            WITH inserted AS (
                INSERT INTO documents (id, sequence, deleted, rev, body, metadata, expiry)
                SELECT u.doc_id, stored_at[u.ord::INTEGER], u.del, u.rev, u.body, u.meta, NULLIF(u.exp, 'NaN'::FLOAT8)
                FROM unnest(doc_ids, doc_expected, doc_deleted, doc_revs, doc_bodies, doc_metadata, doc_expiries)
                    WITH ORDINALITY AS u(doc_id, was, del, rev, body, meta, exp, ord)
                WHERE u.was = 0 AND stored_at[u.ord::INTEGER] > 0
                ORDER BY u.doc_id  -- two writers creating the same documents wait for each other in one order
                ON CONFLICT (id) DO NOTHING RETURNING id)
            SELECT coalesce(array_agg(id), '{}') INTO created FROM inserted;
            FOR i IN 1..total LOOP
                IF doc_expected[i] = 0 AND stored_at[i] > 0 AND NOT (doc_ids[i] = ANY(created)) THEN
                    stored_at[i] := 0;
                END IF;
            END LOOP;
            DELETE FROM channel_changes c USING unnest(unch_docs, unch_names, unch_sequences) AS r(doc, channel, seq)
            WHERE stored_at[r.doc] > 0 AND c.channel = r.channel AND c.sequence = r.seq;
            INSERT INTO channel_changes (channel, sequence, doc_id, removed)
            SELECT r.channel, CASE WHEN r.seq = 0 THEN stored_at[r.doc] ELSE r.seq END, doc_ids[r.doc], r.removed
            FROM unnest(ch_docs, ch_names, ch_sequences, ch_removed) AS r(doc, channel, seq, removed)
            WHERE stored_at[r.doc] > 0;
            DELETE FROM grants g
            USING unnest(ungr_docs, ungr_principals, ungr_kinds, ungr_sequences, ungr_targets) AS r(doc, principal, kind, seq, target)
            WHERE stored_at[r.doc] > 0 AND g.principal = r.principal AND g.kind = r.kind AND g.sequence = r.seq
                AND g.target = r.target;
            INSERT INTO grants (principal, kind, sequence, target, doc_id)
            SELECT r.principal, r.kind, CASE WHEN r.seq = 0 THEN stored_at[r.doc] ELSE r.seq END, r.target, doc_ids[r.doc]
            FROM unnest(gr_docs, gr_principals, gr_kinds, gr_sequences, gr_targets) AS r(doc, principal, kind, seq, target)
            WHERE stored_at[r.doc] > 0;
            INSERT INTO attachments (digest, data)
            SELECT a.digest, a.data FROM unnest(att_docs, att_digests, att_data) AS a(doc, digest, data)
            WHERE stored_at[a.doc] > 0
            ORDER BY a.digest
            ON CONFLICT DO NOTHING;
            IF EXISTS (SELECT 1 FROM unnest(stored_at) AS s(v) WHERE s.v > 0) THEN
                PERFORM pg_notify('couchette', notice || ' ' || (SELECT max(s.v) FROM unnest(stored_at) AS s(v)));
            END IF;
            RETURN stored_at;
        END $$
        """

    let schema: String
    let sequencer: PostgresSequencer

    /// Stores `writes` (each document once: a later write of the same document is reported stale, to be computed
    /// again on the first's result), returning for each its sequence, or nil when its document changed since it was
    /// computed and nothing of it was stored.
    func store(_ writes: [EncodedWrite], _ link: PostgresLink) throws(GatewayError) -> [UInt64?] {
        let statement = self.statement(for: writes)
        guard let query = statement.query else { return statement.positions.map { _ in nil } }
        return try Self.sequences(from: try link.query(query), at: statement.positions)
    }

    /// ``store(_:_:)``, holding no thread while PostgreSQL answers.
    func store(_ writes: [EncodedWrite], _ link: PostgresLink) async throws(GatewayError) -> [UInt64?] {
        let statement = self.statement(for: writes)
        guard let query = statement.query else { return statement.positions.map { _ in nil } }
        return try Self.sequences(from: try await link.query(query), at: statement.positions)
    }

    /// The one statement storing `writes` (nil when none has rows to store), and each write's position in its
    /// arrays (nil for a write not stored).
    private func statement(for writes: [EncodedWrite]) -> (query: PostgresQuery?, positions: [Int?]) {
        var columns = Columns()
        var positions: [Int?] = []
        var seen: Set<String> = []
        for write in writes {
            guard let rows = write.rows, seen.insert(write.document.id).inserted else {
                positions.append(nil)
                continue
            }
            positions.append(columns.append(write, rows))
        }
        guard !columns.ids.isEmpty else { return (nil, positions) }
        let query: PostgresQuery = """
            SELECT store_documents(\(sequencer.tag), \(schema),
                \(columns.ids), \(columns.expected), \(columns.deleted), \(columns.revisions), \(columns.bodies),
                \(columns.metadata), \(columns.expiries),
                \(columns.channelDocuments), \(columns.channelNames), \(columns.channelSequences), \(columns.channelRemoved),
                \(columns.unchannelDocuments), \(columns.unchannelNames), \(columns.unchannelSequences),
                \(columns.grantDocuments), \(columns.grantPrincipals), \(columns.grantKinds), \(columns.grantSequences),
                \(columns.grantTargets),
                \(columns.ungrantDocuments), \(columns.ungrantPrincipals), \(columns.ungrantKinds),
                \(columns.ungrantSequences), \(columns.ungrantTargets),
                \(columns.attachmentDocuments), \(columns.attachmentDigests), \(columns.attachmentData))
            """
        return (query, positions)
    }

    /// Each write's sequence from the function's answer, nil for a write not stored.
    private static func sequences(from result: PostgresQueryResult, at positions: [Int?]) throws(GatewayError) -> [UInt64?] {
        guard let row = result.rows.first else {
            throw .internalError("PostgreSQL storage: store_documents returned nothing")
        }
        let stored = try PostgresLink.decode(row, as: [Int64].self)
        return positions.map { position in
            guard let position, position < stored.count, stored[position] > 0 else { return nil }
            return UInt64(stored[position])
        }
    }

    // MARK: - Columns

    /// The function's arrays. Document positions in the row arrays count from 1, as PostgreSQL's arrays do.
    private struct Columns {
        var ids: [String] = []
        var expected: [Int64] = []
        var deleted: [Bool] = []
        var revisions: [String] = []
        var bodies: [ByteBuffer] = []
        var metadata: [ByteBuffer] = []
        /// NaN: none (arrays of optionals do not bind).
        var expiries: [Double] = []
        var channelDocuments: [Int32] = []
        var channelNames: [String] = []
        var channelSequences: [Int64] = []
        var channelRemoved: [Bool] = []
        var unchannelDocuments: [Int32] = []
        var unchannelNames: [String] = []
        var unchannelSequences: [Int64] = []
        var grantDocuments: [Int32] = []
        var grantPrincipals: [String] = []
        var grantKinds: [Int16] = []
        var grantSequences: [Int64] = []
        var grantTargets: [String] = []
        var ungrantDocuments: [Int32] = []
        var ungrantPrincipals: [String] = []
        var ungrantKinds: [Int16] = []
        var ungrantSequences: [Int64] = []
        var ungrantTargets: [String] = []
        var attachmentDocuments: [Int32] = []
        var attachmentDigests: [String] = []
        var attachmentData: [ByteBuffer] = []

        /// Adds a write; returns its position (from 0) in the function's answer.
        mutating func append(_ write: EncodedWrite, _ rows: EncodedWrite.Rows) -> Int {
            let position = ids.count
            let document = Int32(position + 1)
            ids.append(write.document.id)
            expected.append(Int64(write.previousSequence ?? 0))
            deleted.append(rows.isDeleted)
            revisions.append(rows.revision)
            bodies.append(rows.winnerBody.byteBuffer)
            metadata.append(rows.metadata.byteBuffer)
            expiries.append(rows.expiry?.timeIntervalSince1970 ?? .nan)
            let changes = rows.changes
            for row in changes.insertedChannelRows {
                channelDocuments.append(document)
                channelNames.append(row.channel)
                channelSequences.append(Self.sequence(row.sequence))
                channelRemoved.append(row.removed)
            }
            for row in changes.deletedChannelRows {
                unchannelDocuments.append(document)
                unchannelNames.append(row.channel)
                unchannelSequences.append(Self.sequence(row.sequence))
            }
            for row in changes.insertedGrantRows {
                grantDocuments.append(document)
                grantPrincipals.append(row.grant.principal)
                grantKinds.append(Int16(row.grant.kind.rawValue))
                grantSequences.append(Self.sequence(row.sequence))
                grantTargets.append(row.grant.target)
            }
            for row in changes.deletedGrantRows {
                ungrantDocuments.append(document)
                ungrantPrincipals.append(row.grant.principal)
                ungrantKinds.append(Int16(row.grant.kind.rawValue))
                ungrantSequences.append(Self.sequence(row.sequence))
                ungrantTargets.append(row.grant.target)
            }
            for data in write.attachments {
                attachmentDocuments.append(document)
                attachmentDigests.append(AttachmentDigest.sha1(of: data).description)
                attachmentData.append(data.byteBuffer)
            }
            return position
        }

        /// A row's sequence as the function takes it: 0 for the write's own, not known yet.
        private static func sequence(_ sequence: UInt64) -> Int64 {
            sequence == EncodedWrite.pendingSequence ? 0 : Int64(sequence)
        }
    }
}
