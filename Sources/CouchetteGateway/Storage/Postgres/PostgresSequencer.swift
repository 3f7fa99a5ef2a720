import PostgresNIO

// MARK: - PostgresSequencer

/// Sequences for the writers of every node without a lock between them, and the stable sequence below which a feed
/// may read without ever missing a later commit (docs/decisions.md, "Sequences across nodes without a lock").
///
/// Writers take their sequences from the PostgreSQL `SEQUENCE` `document_sequence` (`nextval` waits for nobody), so
/// transactions can commit out of sequence order: a feed that returned `12` while `11` was still being written would
/// never send `11`. Each write transaction therefore first holds a *ticket*: a shared, transaction-scoped advisory
/// lock on the sequence's value plus one, taken **before** it takes any sequence, so every sequence it takes is at
/// least its ticket, and released by PostgreSQL only once its commit (or rollback) is visible. The stable sequence
/// reads the sequence's value `v` **first**, then the smallest ticket held `m`, and is `min(v, m - 1)`:
///
/// - a sequence `s ≤ v` was taken before `v` was read, so its ticket was already held then, and is either still held
///   (`m ≤ ticket ≤ s`, so `s` is above the stable sequence) or released (its transaction has ended: committed rows
///   are visible to every statement after this one);
/// - a sequence taken after `v` was read is above `v`.
///
/// So every sequence at or below the stable sequence that will ever commit has committed, and a feed reads
/// `since < sequence ≤ stable` in a later statement (a later snapshot). Gaps (rolled-back writes, sequences a batch
/// took but did not use) are simply never filled.
///
/// Advisory lock keys are shared by every schema of a PostgreSQL database: a ticket's key is the schema's ``tag`` (its
/// name's hash in the high bits, clear of the 32-bit keys migrations lock) plus the ticket, so the tickets of this
/// schema are the keys in `tag ..< tag + 2^40`. Two schemas whose names hash alike only hold each other's feeds back
/// while their writes are in flight; they never make one skip.
struct PostgresSequencer: Sendable {
    /// The base of this schema's ticket keys.
    let tag: Int64

    /// The sequencer of the database whose tables are in `schema`.
    init(schema: String) {
        // FNV-1a: the same on every node (Swift's `Hasher` is seeded per process).
        var hash: UInt32 = 2_166_136_261
        for byte in schema.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        tag = Int64(0x10_0000 | (hash & 0xF_FFFF)) << 40
    }

    /// The functions the migration (re)creates in each schema.
    static let functions = [
        """
        CREATE OR REPLACE FUNCTION take_sequences(count INTEGER, tag BIGINT) RETURNS BIGINT[] LANGUAGE plpgsql AS $$
        DECLARE current BIGINT;
        BEGIN
            IF count <= 0 THEN RETURN '{}'; END IF;
            SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO current FROM document_sequence;
            PERFORM pg_advisory_xact_lock_shared(tag + current + 1);
            RETURN ARRAY(SELECT nextval('document_sequence') FROM generate_series(1, count));
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION stable_sequence(tag BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
        DECLARE current BIGINT; ticket BIGINT;
        BEGIN
            SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO current FROM document_sequence;
            SELECT min(((l.classid::BIGINT << 32) | l.objid::BIGINT) - tag) INTO ticket FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.objsubid = 1
                AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND l.classid::BIGINT >= (tag >> 32) AND l.classid::BIGINT < (tag >> 32) + 256;
            RETURN CASE WHEN ticket IS NULL THEN current ELSE least(current, ticket - 1) END;
        END $$
        """,
    ]

    /// Takes `count` sequences (increasing, not necessarily consecutive), holding a ticket until the transaction
    /// ends; outside a transaction, the ticket ends with the statement.
    func take(_ count: Int, _ link: PostgresLink) throws(GatewayError) -> [UInt64] {
        guard count > 0 else { return [] }
        guard let row = try link.query("SELECT take_sequences(\(Int32(clamping: count)), \(tag))").rows.first else {
            throw .internalError("PostgreSQL storage: no sequences taken")
        }
        return try PostgresLink.decode(row, as: [Int64].self).map { UInt64($0) }.sorted()
    }

    /// The stable sequence: every sequence at or below it that will ever commit has committed.
    func stable(_ link: PostgresLink) throws(GatewayError) -> UInt64 {
        guard let row = try link.query(stableQuery).rows.first else { return 0 }
        return UInt64(max(0, try PostgresLink.decode(row, as: Int64.self)))
    }

    /// ``stable(_:)-(PostgresLink)``, holding no thread while PostgreSQL answers.
    func stable(_ link: PostgresLink) async throws(GatewayError) -> UInt64 {
        guard let row = try await link.query(stableQuery).rows.first else { return 0 }
        return UInt64(max(0, try PostgresLink.decode(row, as: Int64.self)))
    }

    /// The statement ``stable(_:)`` runs, for callers holding a connection of their own (the change listener).
    var stableQuery: PostgresQuery { "SELECT stable_sequence(\(tag))" }
}
