// MARK: - PostgresDocumentTotals

/// The document counts and body bytes of ``PostgresGatewayStorage`` (`GET /{db}/`, `_all_docs`'s `total_rows`), kept
/// by triggers on `documents` instead of counted at each request (a count of 1,000,000 documents took ~110 ms).
///
/// Every statement that inserts, updates or deletes documents adds what it changed (from its transition tables) to
/// one of ``stripes`` rows of `document_totals`, the one of its connection (`pg_backend_pid()`): writers on different
/// connections, of any node, do not wait for each other's row, and the row's lock is taken at the end of the
/// statement, held to the commit like the documents'. A read sums the stripes, and sees exactly the committed
/// documents (a rolled-back write's additions roll back with it). Every write path is covered, whatever statement it
/// uses: the single-statement writer, batches, purges, compaction's rewrites.
enum PostgresDocumentTotals {
    /// How many rows writers spread over.
    static let stripes = 64

    /// The table and its triggers (`CREATE OR REPLACE` and `IF NOT EXISTS`: run at every migration), and, when the
    /// table is new, its first row from a count of the documents (the triggers are in place first, in the same
    /// transaction, which holds writers off the table until it commits).
    static let statements: [String] = [
        """
        CREATE TABLE IF NOT EXISTS document_totals (
            stripe INT PRIMARY KEY, live BIGINT NOT NULL, deleted BIGINT NOT NULL, body_bytes BIGINT NOT NULL
        )
        """,
        addFunction("count_inserted_documents", adding: "new_rows", sign: "+"),
        addFunction("count_deleted_documents", adding: "old_rows", sign: "-"),
        """
        CREATE OR REPLACE FUNCTION count_updated_documents() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            \(add(from: "(SELECT deleted, body, 1 AS sign FROM new_rows UNION ALL SELECT deleted, body, -1 FROM old_rows)"))
            RETURN NULL;
        END $$
        """,
        "CREATE OR REPLACE TRIGGER count_inserted AFTER INSERT ON documents REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_documents()",
        "CREATE OR REPLACE TRIGGER count_updated AFTER UPDATE ON documents REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_updated_documents()",
        "CREATE OR REPLACE TRIGGER count_deleted AFTER DELETE ON documents REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_deleted_documents()",
        """
        INSERT INTO document_totals (stripe, live, deleted, body_bytes)
        SELECT -1, count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted), coalesce(sum(length(body)), 0)
        FROM documents HAVING NOT EXISTS (SELECT 1 FROM document_totals)
        """,
    ]

    /// The counts now: live and deleted documents, and the bytes of the current revisions' bodies.
    static let query = """
        SELECT coalesce(sum(live), 0)::bigint, coalesce(sum(deleted), 0)::bigint, coalesce(sum(body_bytes), 0)::bigint
        FROM document_totals
        """

    /// A trigger function adding (`+`) or taking away (`-`) the rows of one transition table.
    private static func addFunction(_ name: String, adding table: String, sign: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            \(add(from: "(SELECT deleted, body, \(sign)1 AS sign FROM \(table))"))
            RETURN NULL;
        END $$
        """
    }

    /// The statement adding the signed counts of `rows` (columns `deleted`, `body`, `sign`) to the connection's stripe.
    private static func add(from rows: String) -> String {
        """
        INSERT INTO document_totals AS t (stripe, live, deleted, body_bytes)
            SELECT pg_backend_pid() % \(stripes), coalesce(sum(sign) FILTER (WHERE NOT deleted), 0),
                coalesce(sum(sign) FILTER (WHERE deleted), 0), coalesce(sum(sign * length(body)), 0)
            FROM \(rows) AS changed
            HAVING count(*) > 0
            ON CONFLICT (stripe) DO UPDATE SET live = t.live + excluded.live, deleted = t.deleted + excluded.deleted,
                body_bytes = t.body_bytes + excluded.body_bytes;
        """
    }
}
