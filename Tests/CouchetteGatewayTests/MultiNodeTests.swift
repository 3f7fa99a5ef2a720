import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - MultiNodeTests

/// Three `couchette-gateway` processes serving one PostgreSQL database (issue 20): what one node writes, every node's
/// feeds deliver, once and in order, whatever commits late, rolls back or dies mid-batch.
@Suite("Several gateway nodes on PostgreSQL", .timeLimit(.minutes(5)))
struct MultiNodeTests {
    /// A PostgreSQL database, a configuration file naming it and the nodes serving it.
    final class Cluster: @unchecked Sendable {
        let directory: URL
        let configPath: String
        let server: PostgresServer
        let databaseName: String
        var nodes: [GatewayProcess] = []

        init(nodes count: Int, sync: String? = nil) async throws {
            server = try await PostgresServer.sharedServer()
            let url = try await server.newDatabase()
            databaseName = String(url.split(separator: "/").last ?? "")
            // A server process whose client died notices it within 50 ms, even inside a long statement.
            _ = try server.psql("ALTER DATABASE \(databaseName) SET client_connection_check_interval = '50ms'")
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("nodes-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            configPath = directory.appendingPathComponent("config.json").path
            var database: [String: JSONValue] = [
                "server": .string(url),
                "users": ["GUEST": ["disabled": false, "admin_channels": ["*"]]],
            ]
            if let sync { database["sync"] = .string(sync) }
            let config: JSONValue = [
                "interface": "127.0.0.1:0", "adminInterface": "127.0.0.1:0", "databases": ["db": .object(database)],
            ]
            try Data(config.serialized()).write(to: URL(fileURLWithPath: configPath))
            for _ in 0..<count {
                let configPath = configPath
                nodes.append(try await GatewayProcess.start(configPath: configPath))
            }
        }

        /// Runs SQL in the cluster's database (`psql`, waited for on a thread of its own).
        @discardableResult
        func psql(_ sql: String) async throws -> String {
            let (server, databaseName) = (server, databaseName)
            return try await offCooperativeThreads { try server.psql(sql, database: databaseName) }
        }

        func stop() {
            for node in nodes { node.terminate() }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// A continuous admin feed opened before the writes; read once they are done.
    final class FeedReader: @unchecked Sendable {
        private let feed: StreamingResponse
        /// The documents' sequences read so far, in the order they arrived.
        private(set) var sequences: [UInt64] = []

        init(client: HTTPTestClient, port: Int) async throws {
            feed = try await StreamingResponse.open(
                client, port: port, path: "/db/_changes?feed=continuous&since=0&heartbeat=1000")
        }

        /// Reads entries until the one at `sequence`, or until the feed ends or breaks (its node died).
        func read(through sequence: UInt64) async {
            while sequences.last.map({ $0 < sequence }) ?? true, let line = try? await feed.nextLine() {
                guard !line.isEmpty, let entry = try? JSONValue(parsing: Array(line.utf8)),
                    let sequence = entry["seq"]?.intValue, let id = entry["id"]?.stringValue, !id.hasPrefix("_user/")
                else { continue }
                sequences.append(UInt64(sequence))
            }
        }
    }

    @Test("Writers on three nodes with late commits, rollbacks and a node killed mid-batch: every feed on every node delivers every committed sequence once, in order; nothing acknowledged is lost")
    func feedsOnEveryNodeDeliverEveryCommitInOrder() async throws {
        let cluster = try await Cluster(nodes: 3)
        defer { cluster.stop() }
        let client = HTTPTestClient()
        defer { client.close() }
        // Commits arrive late (a random pause in the batch's statement), documents named rollback-… fail their whole
        // transaction, as a failing disk or a constraint would, and the large batch pauses inside its transaction,
        // holding back every feed's stable sequence, until the test has killed its node (PostgreSQL then ends the pause and rolls back).
        try await cluster.psql(
            """
            CREATE FUNCTION couchette_db.late() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(random() * 0.02); RETURN NULL; END $$;
            CREATE TRIGGER late AFTER INSERT ON couchette_db.documents FOR EACH STATEMENT EXECUTE FUNCTION couchette_db.late();
            CREATE FUNCTION couchette_db.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.id LIKE 'rollback-%' THEN RAISE EXCEPTION 'deliberate rollback'; END IF;
            IF NEW.id = 'big-0' THEN PERFORM pg_sleep(30); END IF;
            RETURN NEW; END $$;
            CREATE TRIGGER refuse BEFORE INSERT ON couchette_db.documents FOR EACH ROW EXECUTE FUNCTION couchette_db.refuse();
            """)
        var feeds: [FeedReader] = []
        for node in cluster.nodes { feeds.append(try await FeedReader(client: client, port: node.adminPort)) }

        let acknowledged = AcknowledgedIDs()
        let refused = AcknowledgedIDs()
        let writerPorts = cluster.nodes.prefix(2).map(\.adminPort)
        // Two writers per node: batches of 10, every fifth carrying a document that rolls the batch back.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, port) in writerPorts.enumerated() {
                for writer in 0..<2 {
                    group.addTask {
                        for batch in 0..<15 {
                            var ids = (0..<10).map { "n\(index)-w\(writer)-b\(batch)-\($0)" }
                            if batch % 5 == 4 { ids.append("rollback-n\(index)-w\(writer)-b\(batch)") }
                            let reply = try await client.send(
                                "POST", port: port, path: "/db/_bulk_docs",
                                json: ["docs": .array(ids.map { ["_id": .string($0)] })])
                            let results = try reply.jsonValue().arrayValue ?? []
                            let saved = results.compactMap { $0["rev"] != nil ? $0["id"]?.stringValue : nil }
                            await acknowledged.add(saved)
                            if saved.isEmpty { await refused.add(ids) }
                        }
                    }
                }
            }
            // The third node takes one large batch and is killed while its transaction is open.
            let victim = cluster.nodes[2]
            let victimApplication = "couchette-gateway \(victim.child.processIdentifier)"
            let victimPort = victim.adminPort
            group.addTask {
                let docs = JSONValue.array((0..<3_000).map { ["_id": .string("big-\($0)")] })
                _ = try? await client.send("POST", port: victimPort, path: "/db/_bulk_docs", json: ["docs": docs])
            }
            // Its write transaction is paused in the trigger, writing its documents.
            try await withDeadline(.seconds(60), "the large batch's transaction") {
                while try await cluster.psql(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(victimApplication)' AND wait_event = 'PgSleep'"
                ).trimmingCharacters(in: .whitespacesAndNewlines) == "0" {
                    try await Task.sleep(for: .milliseconds(5))  // PostgreSQL has no event to wait on: ask again
                }
            }
            victim.kill()
            try await group.waitForAll()
        }

        let storedSequences = Set(
            try await cluster.psql("SELECT sequence FROM couchette_db.documents").split(separator: "\n").compactMap {
                UInt64($0.trimmingCharacters(in: .whitespaces))
            })
        let storedIDs = Set(
            try await cluster.psql("SELECT id FROM couchette_db.documents").split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            })
        // Nothing acknowledged is lost; nothing refused is stored; the killed batch is all there or not at all.
        #expect(Set(await acknowledged.ids).isSubset(of: storedIDs))
        #expect(Set(await refused.ids).isDisjoint(with: storedIDs))
        let big = storedIDs.filter { $0.hasPrefix("big-") }.count
        // Killed while its transaction was open: none of it is stored.
        #expect(big == 0, "the killed node's batch is stored: \(big) documents")
        #expect(await acknowledged.ids.count >= 4 * 12 * 10)

        let last = try #require(storedSequences.max())
        for (index, feed) in feeds.enumerated() {
            try await withDeadline(.seconds(60), "node \(index)'s feed catching up") { await feed.read(through: last) }
            let delivered = feed.sequences
            #expect(delivered == delivered.sorted() && Set(delivered).count == delivered.count, "node \(index): out of order or repeated")
            if index < 2 {
                #expect(Set(delivered) == storedSequences, "node \(index): \(storedSequences.subtracting(delivered).count) missing")
            } else {
                // The killed node's feed ended with it: what it sent is a beginning of the others'.
                #expect(Set(delivered).isSubset(of: storedSequences))
                #expect(delivered == Array(storedSequences.sorted().prefix(delivered.count)))
            }
        }
    }

    @Test("A session from one node works on another; a password, sync function or offline state changed on one is used by the others; _local checkpoints, attachments, compaction and purges are shared")
    func stateIsSharedAcrossNodes() async throws {
        let cluster = try await Cluster(nodes: 2)
        defer { cluster.stop() }
        let client = HTTPTestClient()
        defer { client.close() }
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let created = try await client.send(
            "PUT", port: a.adminPort, path: "/db/_user/alice",
            json: ["password": "secret1", "admin_channels": ["alice"]])
        #expect(created.status == 201)
        // A session made on A opens B.
        let login = try await client.send(
            "POST", port: a.publicPort, path: "/db/_session", json: ["name": "alice", "password": "secret1"])
        #expect(login.status == 200)
        let cookie = try #require(login.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let onB = try await client.send("GET", port: b.publicPort, path: "/db/_session", headers: ["Cookie": cookie])
        #expect(try onB.jsonValue()["userCtx"]?["name"]?.stringValue == "alice")
        // A password changed on B is the one A checks.
        _ = try await client.send("PUT", port: b.adminPort, path: "/db/_user/alice", json: ["password": "secret2"])
        #expect(try await client.send("GET", port: a.publicPort, path: "/db/", user: ("alice", "secret1")).status == 401)
        #expect(try await client.send("GET", port: a.publicPort, path: "/db/", user: ("alice", "secret2")).status == 200)
        // A checkpoint saved on A is read and updated on B, with A's revision.
        let saved = try await client.send("PUT", port: a.adminPort, path: "/db/_local/cp", json: ["seq": 1])
        let rev = try #require(try saved.jsonValue()["rev"]?.stringValue)
        #expect(try await client.send("GET", port: b.adminPort, path: "/db/_local/cp").jsonValue()["seq"]?.intValue == 1)
        #expect(try await client.send("PUT", port: b.adminPort, path: "/db/_local/cp", json: ["seq": 2, "_rev": .string(rev)]).status == 201)
        #expect(try await client.send("PUT", port: a.adminPort, path: "/db/_local/cp", json: ["seq": 3, "_rev": .string(rev)]).status == 409)
        // An attachment written through A is read through B.
        let put = try await client.send(
            "PUT", port: a.adminPort, path: "/db/doc/file.txt", headers: ["Content-Type": "text/plain"],
            body: Array("shared bytes".utf8))
        #expect(put.status == 201)
        let read = try await client.send("GET", port: b.adminPort, path: "/db/doc/file.txt")
        #expect(read.text == "shared bytes")
        let bAdmin = b.adminPort
        // A document updated on A is compacted on B and purged on A: B sees both.
        let first = try await client.send("PUT", port: a.adminPort, path: "/db/edited", json: ["v": 1])
        let firstRev = try #require(try first.jsonValue()["rev"]?.stringValue)
        #expect(try await client.send("PUT", port: a.adminPort, path: "/db/edited?rev=\(firstRev)", json: ["v": 2]).status == 201)
        #expect(try await client.send("POST", port: b.adminPort, path: "/db/_compact").jsonValue() == ["revs": 1])
        #expect(try await client.send("GET", port: a.adminPort, path: "/db/edited").jsonValue()["v"] == 2)
        let purged = try await client.send("POST", port: a.adminPort, path: "/db/_purge", json: ["edited": ["*"]])
        #expect(try purged.jsonValue() == ["purged": ["edited": ["*"]]])
        #expect(try await client.send("GET", port: b.adminPort, path: "/db/edited").status == 404)
        // A sync function deployed on A is the one B runs, once the deployment's sequence reaches B.
        let source = "function (doc) { if (doc.refuse) { throw({forbidden: \"refused on every node\"}); } channel(doc.channels); }"
        let deployed = try await client.send(
            "PUT", port: a.adminPort, path: "/db/_config/sync", headers: ["Content-Type": "application/javascript"],
            body: Array(source.utf8))
        #expect(deployed.status == 200)
        try await withDeadline(.seconds(10), "B running A's sync function") {
            while try await client.send("GET", port: bAdmin, path: "/db/_config/sync").text != source {
                try await Task.sleep(for: .milliseconds(10))  // no event reaches the test: ask again
            }
        }
        let refused = try await client.send("PUT", port: b.adminPort, path: "/db/refused", json: ["refuse": true])
        #expect(refused.status == 403)
        // _offline on A takes B offline; _online on A brings it back.
        #expect(try await client.send("POST", port: a.adminPort, path: "/db/_offline").status == 200)
        try await withDeadline(.seconds(10), "B going offline") {
            while try await client.send("GET", port: bAdmin, path: "/db/").jsonValue()["state"] != "Offline" {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(try await client.send("GET", port: b.publicPort, path: "/db/doc").status == 503)
        #expect(try await client.send("POST", port: a.adminPort, path: "/db/_online").status == 200)
        try await withDeadline(.seconds(10), "B coming back online") {
            while try await client.send("GET", port: bAdmin, path: "/db/").jsonValue()["state"] != "Online" {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        // A write on A reaches a longpoll waiting on B.
        let since = try await client.send("GET", port: b.adminPort, path: "/db/").jsonValue()["update_seq"]?.intValue ?? 0
        async let waiting = client.send("GET", port: b.adminPort, path: "/db/_changes?feed=longpoll&since=\(since)&timeout=30000")
        _ = try await client.send("PUT", port: a.adminPort, path: "/db/late", json: ["v": 1])
        let woken = try await waiting
        #expect(try woken.jsonValue()["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["late"])
    }

    @Test("Feeds share their reads: a read after a commit — the node's own or one another node announced — returns it, however many identical reads came before")
    func sharedFeedReadsSeeEveryCommit() async throws {
        let location = try await StorageBackend.postgres.newLocation()
        let config = DatabaseConfig(name: "db", server: location)
        let nodeA = try await offCooperativeThreads { try GatewayDatabase(config: config, startTime: 0) }
        let nodeB = try await offCooperativeThreads { try GatewayDatabase(config: config, startTime: 0) }
        defer {
            nodeA.close()
            nodeB.close()
        }
        for round in 0..<20 {
            // Identical reads on both nodes (the second is the kept answer), then a write on A.
            let before = try await offCooperativeThreads { () throws -> Int in
                _ = try nodeB.storage.changes(since: 0, limit: nil)
                _ = try nodeA.storage.changes(since: 0, limit: nil)
                return try nodeB.storage.changes(since: 0, limit: nil).count
            }
            let written = try await offCooperativeThreads { () throws -> UInt64 in
                try nodeA.documents.put(id: "doc\(round)", body: ["round": .int(Int64(round))])
                return try nodeA.storage.lastSequence
            }
            // A's own commit: its next read has it.
            let onA = try await offCooperativeThreads { try nodeA.storage.changes(since: 0, limit: nil) }
            #expect(onA.count == before + 1 && onA.last?.sequence == written, "round \(round) on A")
            // B once its notifier has heard of the commit, as its feeds read then.
            var heard = nodeB.changeNotifier.lastSequence
            while heard < written { heard = await nodeB.changeNotifier.wait(after: heard) ?? heard }
            let onB = try await offCooperativeThreads { try nodeB.storage.changes(since: 0, limit: nil) }
            #expect(onB.count == before + 1 && onB.last?.sequence == written, "round \(round) on B")
        }
    }

    @Test("A document written with _exp on one node is purged by another node's sweep once it expires")
    func expiryAcrossNodes() async throws {
        let location = try await StorageBackend.postgres.newLocation()
        let config = DatabaseConfig(name: "db", server: location)
        // On a thread of its own: PostgreSQL calls wait, and must not hold cooperative threads.
        try await offCooperativeThreads {
            let nodeA = try GatewayDatabase(config: config, startTime: 0)
            let nodeB = try GatewayDatabase(config: config, startTime: 0)
            defer {
                nodeA.close()
                nodeB.close()
            }
            try nodeA.documents.put(id: "brief", body: ["_exp": 60, "v": 1])
            try nodeA.documents.put(id: "kept", body: ["v": 1])
            #expect(try nodeB.purgeExpiredDocuments() == 0)
            #expect(try nodeB.purgeExpiredDocuments(now: Date().addingTimeInterval(120)) == 1)
            #expect(try nodeA.storage.document(id: "brief") == nil)
            #expect(try nodeA.storage.document(id: "kept") != nil)
            #expect(try nodeA.purgeExpiredDocuments(now: Date().addingTimeInterval(120)) == 0)
        }
    }
}
