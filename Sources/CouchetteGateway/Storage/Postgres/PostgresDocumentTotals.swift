// MARK: - PostgresDocumentTotals

/// The document counts and body bytes of ``PostgresGatewayStorage`` (`GET /{db}/`, `_all_docs`'s `total_rows`), kept
/// by triggers on `documents` instead of counted at each request (a count of 1,000,000 documents took ~110 ms).
///
/// Every statement that inserts, updates or deletes documents adds what it changed (from its transition tables) to
/// one of ``stripes`` rows of `document_totals`, and a read sums them: it sees exactly the committed documents (a
/// rolled-back write's additions roll back with it). Every write path is covered, whatever statement it uses: the
/// single-statement writer, batches, purges, compaction's rewrites.
///
/// A transaction adds to a stripe it holds a transaction-scoped advisory lock on, tried from its connection's
/// (`pg_backend_pid()`) onward without waiting, so that no two writers of any node ever wait for each other's stripe
/// row: a writer holding a stripe's row lock until its commit while waiting for a document row of another writer that
/// waits for the same stripe would deadlock. Only past ``stripes`` writers at once does one wait for a stripe.
enum PostgresDocumentTotals {
    /// How many rows writers spread over.
    static let stripes = 64

    /// The table and its functions (`CREATE OR REPLACE`: run at every open), in `schema`.
    static func statements(schema: String) -> [String] {
        let table = PostgresLink.quoted(schema) + ".document_totals"
        return [
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                stripe INT PRIMARY KEY, live BIGINT NOT NULL, deleted BIGINT NOT NULL, body_bytes BIGINT NOT NULL
            )
            """,
            function("count_inserted_documents", rows: "SELECT deleted, body, 1 AS sign FROM new_rows", table: table),
            function("count_deleted_documents", rows: "SELECT deleted, body, -1 AS sign FROM old_rows", table: table),
            function(
                "count_updated_documents",
                rows: "SELECT deleted, body, 1 AS sign FROM new_rows UNION ALL SELECT deleted, body, -1 FROM old_rows",
                table: table),
        ]
    }

    /// The triggers, created when missing (creating one locks `documents` against writers), then, when the table is
    /// new, its first row from a count of the documents: the triggers are in place first, in the same transaction,
    /// which holds writers off the table until it commits.
    static let triggers: [(name: String, statement: String)] = [
        ("count_inserted", "CREATE TRIGGER count_inserted AFTER INSERT ON documents REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_documents()"),
        ("count_updated", "CREATE TRIGGER count_updated AFTER UPDATE ON documents REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_updated_documents()"),
        ("count_deleted", "CREATE TRIGGER count_deleted AFTER DELETE ON documents REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_deleted_documents()"),
    ]

    /// The first row, from a count of the documents, when the table has none.
    static let firstCount = """
        INSERT INTO document_totals (stripe, live, deleted, body_bytes)
        SELECT -1, count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted), coalesce(sum(length(body)), 0)
        FROM documents HAVING NOT EXISTS (SELECT 1 FROM document_totals)
        """

    /// The counts now: live and deleted documents, and the bytes of the current revisions' bodies.
    static let query = """
        SELECT coalesce(sum(live), 0)::bigint, coalesce(sum(deleted), 0)::bigint, coalesce(sum(body_bytes), 0)::bigint
        FROM document_totals
        """

    /// A trigger function adding the signed counts of `rows` (columns `deleted`, `body`, `sign`) to a stripe the
    /// transaction holds.
    private static func function(_ name: String, rows: String, table: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            lock_space INT := hashtext(TG_TABLE_SCHEMA || '.document_totals');
            chosen INT := pg_backend_pid() % \(stripes);
        BEGIN
            FOR attempt IN 1..\(stripes) LOOP
                EXIT WHEN pg_try_advisory_xact_lock(lock_space, chosen);
                chosen := (chosen + 1) % \(stripes);
            END LOOP;
            INSERT INTO \(table) AS t (stripe, live, deleted, body_bytes)
                SELECT chosen, coalesce(sum(sign) FILTER (WHERE NOT deleted), 0),
                    coalesce(sum(sign) FILTER (WHERE deleted), 0), coalesce(sum(sign * length(body)), 0)
                FROM (\(rows)) AS changed
                HAVING count(*) > 0
                ON CONFLICT (stripe) DO UPDATE SET live = t.live + excluded.live, deleted = t.deleted + excluded.deleted,
                    body_bytes = t.body_bytes + excluded.body_bytes;
            RETURN NULL;
        END $$
        """
    }
}
