import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - PostgresSequencerTests

/// Sequences in PostgreSQL taken without a lock between writers (``PostgresSequencer``): feeds read only up to the
/// stable sequence, so none ever passes a sequence that commits later, however the commits of several nodes
/// interleave (docs/decisions.md, "Sequences across nodes without a lock").
///
/// The cases run one at a time: each keeps eight threads and PostgreSQL busy, which the suite's timing tests running
/// beside them would feel.
@Suite("PostgreSQL sequences without a lock", .serialized, .timeLimit(.minutes(3)))
struct PostgresSequencerTests {
    /// A new PostgreSQL database: its URL and name.
    private func newDatabase() async throws -> (url: String, name: String) {
        let url = try await PostgresServer.sharedServer().newDatabase()
        return (url, try #require(url.split(separator: "/").last.map(String.init)))
    }

    private func psql(_ sql: String, database: String) async throws -> String {
        let server = try await PostgresServer.sharedServer()
        return try await offCooperativeThreads { try server.psql(sql, database: database) }
    }

    private static func edited(_ document: StoredDocument?, id: String) -> StoredDocument? {
        var document = document ?? StoredDocument(id: id)
        _ = try? document.tree.addLocalEdit(parent: document.winner?.id, body: ["v": 1], deleted: false)
        return document
    }

    @Test(
        "Feeds on two nodes, reading in random pages while writers on both (in transactions and in single statements) commit late, out of sequence order, and some roll back, deliver every committed sequence once, in order",
        arguments: 0..<5)
    func noFeedSkipsALateCommit(seed: Int) async throws {
        let (url, name) = try await newDatabase()
        let location = try StorageLocation(parsing: url)
        // Opening and closing wait for PostgreSQL: not on the cooperative threads.
        let nodes = try await offCooperativeThreads {
            [try location.openStorage(databaseName: "db"), try location.openStorage(databaseName: "db")]
        }
        defer { Thread.detachNewThread { for node in nodes { node.close() } } }
        // Each write pauses for up to 30 ms before it commits; documents named rollback-… fail their transaction.
        _ = try await psql(
            """
            CREATE FUNCTION couchette_db.late() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(random() * 0.03); RETURN NULL; END $$;
            CREATE TRIGGER late AFTER INSERT ON couchette_db.documents FOR EACH STATEMENT EXECUTE FUNCTION couchette_db.late();
            CREATE FUNCTION couchette_db.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.id LIKE 'rollback-%' THEN RAISE EXCEPTION 'deliberate rollback'; END IF; RETURN NEW; END $$;
            CREATE TRIGGER refuse BEFORE INSERT ON couchette_db.documents FOR EACH ROW EXECUTE FUNCTION couchette_db.refuse();
            """, database: name)
        let writing = WriterCount()
        let writersPerNode = 3
        let batches = 20
        // Each task returns the sequences its feed delivered (nil for a writer).
        try await withThrowingTaskGroup(of: [UInt64]?.self) { group in
            for (nodeIndex, node) in nodes.enumerated() {
                for writer in 0..<writersPerNode {
                    writing.value.add(1, ordering: .relaxed)
                    group.addTask {
                        try await offCooperativeThreads {
                            defer { writing.value.subtract(1, ordering: .releasing) }
                            var random = SplitMix64(state: UInt64(seed * 100 + nodeIndex * 10 + writer))
                            for batch in 0..<batches {
                                var ids = (0..<Int.random(in: 1...4, using: &random)).map {
                                    "n\(nodeIndex)-w\(writer)-b\(batch)-\($0)"
                                }
                                if Int.random(in: 0..<5, using: &random) == 0 { ids.append("rollback-\(ids[0])") }
                                if writer % 2 == 0 {
                                    // A transaction: locking reads, then the rows.
                                    _ = try? node.inBatch(updating: ids) { node throws(GatewayError) in
                                        for id in ids { try node.update(documentID: id) { Self.edited($0, id: id) } }
                                    }
                                } else {
                                    // Writes prepared on snapshots, stored in one statement.
                                    let snapshots = (try? node.documents(ids: ids)) ?? [:]
                                    let writes = ids.compactMap { id in
                                        Self.edited(snapshots[id], id: id).map {
                                            EncodedWrite(
                                                document: $0, previous: snapshots[id], attachments: [], encodingRows: true)
                                        }
                                    }
                                    _ = try? node.store(writes)
                                }
                            }
                            return nil
                        }
                    }
                }
                // A reader per node, paging from 0 with random limits until the writers are done and it caught up;
                // each page read by the feeds' awaiting call or by the synchronous one, at random.
                group.addTask {
                    var random = SplitMix64(state: UInt64(seed * 100 + 90 + nodeIndex))
                    var delivered: [UInt64] = []
                    var position: UInt64 = 0
                    while true {
                        let done = writing.value.load(ordering: .acquiring) == 0
                        let (since, limit) = (position, Int.random(in: 1...100, using: &random))
                        let page =
                            if random.next() % 2 == 0 {
                                try await node.fetchChanges(since: since, limit: limit)
                            } else {
                                try await offCooperativeThreads { try node.changes(since: since, limit: limit) }
                            }
                        delivered += page.map(\.sequence)
                        position = page.last?.sequence ?? position
                        if done && page.isEmpty { return delivered }
                    }
                }
            }
            var feeds: [[UInt64]] = []
            for try await case let feed? in group { feeds.append(feed) }
            let stored = try await psql("SELECT sequence FROM couchette_db.documents ORDER BY sequence", database: name)
                .split(separator: "\n").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
            #expect(stored.count > writersPerNode * batches)
            let statementWrites = try await psql(
                "SELECT count(*) FROM couchette_db.documents WHERE id LIKE '%-w1-%'", database: name)
            #expect((Int(statementWrites.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= batches)
            #expect(feeds.count == nodes.count)
            for (index, feed) in feeds.enumerated() {
                #expect(feed == stored, "feed \(index): \(Set(stored).subtracting(feed).sorted()) missing")
            }
        }
    }

    @Test("A database of schema version 1 goes on from its counter, which is dropped")
    func aVersion1DatabaseMigrates() async throws {
        let (url, name) = try await newDatabase()
        let location = try StorageLocation(parsing: url)
        try await offCooperativeThreads {
            let storage = try location.openStorage(databaseName: "db")
            try storage.update(documentID: "a") { Self.edited($0, id: "a") }
            storage.close()
        }
        // What version 1 left: the counter row, no sequence.
        _ = try await psql(
            """
            DROP SEQUENCE couchette_db.document_sequence CASCADE;
            CREATE TABLE couchette_db.counter (id INTEGER PRIMARY KEY, last BIGINT NOT NULL);
            INSERT INTO couchette_db.counter VALUES (1, 41);
            UPDATE couchette_db.meta SET value = '1' WHERE key = 'schema_version';
            """, database: name)
        let sequence = try await offCooperativeThreads {
            let storage = try location.openStorage(databaseName: "db")
            defer { storage.close() }
            #expect(try storage.lastSequence == 41)
            return try storage.update(documentID: "b") { Self.edited($0, id: "b") }?.sequence
        }
        #expect(sequence == 42)
        let tables = try await psql(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'couchette_db' AND tablename = 'counter'", database: name)
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}

// MARK: - WriterCount

/// How many writers are still writing.
private final class WriterCount: Sendable {
    let value = Atomic<Int>(0)
}
