import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionBatchTests

/// A `_bulk_docs` request runs the sync function once per batch (one entry into JavaScript for many documents),
/// with the outcomes, details, logs and per-document limits of one call per document.
@Suite("Sync function: batches", .timeLimit(.minutes(5)))
struct SyncFunctionBatchTests {
    /// A function with every kind of outcome, chosen by `doc.kind`.
    static let source = """
        function(doc, oldDoc) {
          switch (doc.kind) {
            case "forbid": throw({forbidden: "no " + doc._id});
            case "unauthorized": throw({unauthorized: "login " + doc._id});
            case "throw": return doc.missing.property;
            case "reject": reject(409, "rejected " + doc._id); channel("never"); break;
            case "user": requireUser(doc.owner); channel("user." + doc.owner); break;
            case "role": requireRole(doc.role); break;
            case "access": requireAccess(doc.channel); break;
            case "grant": access(doc.owner, "lists." + doc._id); role(doc.owner, "role:member"); break;
            case "badchannel": channel("bad,channel"); break;
            case "old": if (oldDoc) { channel("had." + oldDoc._id); } else { channel("new"); } break;
            case "log": console.log("doc", doc._id, doc.n); console.warn("warned"); break;
          }
          if (doc.n !== undefined) { channel("n" + doc.n); }
          console.info("end", doc._id);
        }
        """

    static let kinds = ["ok", "forbid", "unauthorized", "throw", "reject", "user", "role", "access", "grant",
                        "badchannel", "old", "log"]

    /// Lines a console received.
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var console: SyncFunctionConsole {
            SyncFunctionConsole { [self] level, text in lines.withLock { $0.append("\(level) \(text)") } }
        }
    }

    static func randomRequest(_ generator: inout SplitMix64, index: Int) -> RoutingRequest {
        let names = ["alice", "bob", "carol"]
        var body: [String: JSONValue] = [
            "_id": .string("doc\(index)"), "_rev": "1-abc",
            "kind": .string(kinds[Int(generator.next() % UInt64(kinds.count))]),
            "owner": .string(names[Int(generator.next() % 3)]),
            "role": .string(["member", "admin"][Int(generator.next() % 2)]),
            "channel": .string(["red", "blue"][Int(generator.next() % 2)]),
        ]
        if generator.next() % 2 == 0 { body["n"] = .int(Int64(generator.next() % 1000)) }
        if generator.next() % 4 == 0 { body["extra"] = RandomJSON.value(&generator, depth: 2, names: names) }
        let old: JSONValue? = generator.next() % 3 == 0 ? ["_id": .string("doc\(index)"), "kind": "ok"] : nil
        return RoutingRequest(document: .object(body), oldDocument: old)
    }

    @Test("A batch's outcomes, failure details and console lines equal one call per document", arguments: 0..<12)
    func batchEqualsSingleCalls(seed: UInt64) throws {
        var generator = SplitMix64(state: seed &* 0x9E37_79B9)
        let count = 1 + Int(generator.next() % 260)  // over ``JavaScriptSyncFunction/batchLimit``: several entries
        let requests = (0..<count).map { Self.randomRequest(&generator, index: $0) }
        let users: [SyncUserContext?] = [
            nil, SyncUserContext(name: "alice", roles: ["member"], channels: ["!", "red"]),
            SyncUserContext(name: "bob", roles: [], channels: ["blue"]),
        ]
        let user = users[Int(seed % 3)]
        let batchLines = Lines()
        let singleLines = Lines()
        let batched = try JavaScriptSyncFunction(source: Self.source, poolSize: 1, console: batchLines.console)
        let single = try JavaScriptSyncFunction(source: Self.source, poolSize: 1, console: singleLines.console)
        let batchOutcomes = batched.evaluate(requests, user: user)
        let singleOutcomes = requests.map { single.evaluate(document: $0.document, oldDocument: $0.oldDocument, user: user) }
        #expect(batchOutcomes.count == count)
        for (index, (batch, alone)) in zip(batchOutcomes, singleOutcomes).enumerated() {
            #expect(batch == alone, "document \(index) of \(count)")
        }
        #expect(batchLines.all == singleLines.all)
        // Every kind of outcome showed up somewhere in these batches.
        if count > 100 {
            #expect(batchOutcomes.contains { if case .failed(.syncFunctionException, let detail) = $0 { detail.hasPrefix("TypeError") } else { false } })
            #expect(batchOutcomes.contains { if case .rejected = $0 { true } else { false } })
            #expect(batchOutcomes.contains { if case .routed = $0 { true } else { false } })
        }
    }

    @Test("The time limit applies to each document of a batch: one runaway fails alone, slow ones all pass")
    func timeLimitPerDocument() throws {
        // Each slow document takes about half the limit; together they take far more than it.
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc) {
                  if (doc.loop) { for (;;) {} }
                  var end = Date.now() + doc.spin;
                  while (Date.now() < end) {}
                  channel(doc._id);
                }
                """,
            poolSize: 1, timeLimit: .milliseconds(300))
        var requests = (0..<6).map { index in
            RoutingRequest(document: ["_id": .string("slow\(index)"), "spin": 120], oldDocument: nil)
        }
        requests.insert(RoutingRequest(document: ["_id": "runaway", "loop": true, "spin": 0], oldDocument: nil), at: 3)
        let outcomes = sync.evaluate(requests, user: nil)
        for (request, outcome) in zip(requests, outcomes) {
            let id = request.document["_id"]?.stringValue ?? ""
            if id == "runaway" {
                guard case .failed(.syncFunctionTimedOut, _) = outcome else {
                    Issue.record("the runaway call: \(outcome)")
                    continue
                }
            } else {
                #expect(outcome == .routed(RoutingResult(channels: [id])), "\(id)")
            }
        }
    }

    @Test("A document that exhausts the heap fails alone; the rest of its batch is routed")
    func memoryLimitPerDocument() throws {
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc) {
                  if (doc.hog) { var kept = []; for (;;) { kept.push(new Array(100000).fill(doc._id)); } }
                  channel(doc._id);
                }
                """,
            poolSize: 1, timeLimit: .seconds(30), memoryLimit: 32 << 20)
        let requests = ["a", "b", "hog", "c"].map { id in
            RoutingRequest(document: id == "hog" ? ["_id": "hog", "hog": true] : ["_id": .string(id)], oldDocument: nil)
        }
        let outcomes = sync.evaluate(requests, user: nil)
        #expect(outcomes[0] == .routed(RoutingResult(channels: ["a"])))
        #expect(outcomes[1] == .routed(RoutingResult(channels: ["b"])))
        guard case .failed(.syncFunctionOutOfMemory, _) = outcomes[2] else {
            Issue.record("the hog: \(outcomes[2])")
            return
        }
        #expect(outcomes[3] == .routed(RoutingResult(channels: ["c"])))
    }

    @Test("_bulk_docs through the sync function: each document gets its own result, a runaway one its time-out")
    func bulkDocsResults() async throws {
        let sync = try JavaScriptSyncFunction(
            source: """
                function(doc, oldDoc) {
                  if (doc.loop) { for (;;) {} }
                  if (!doc.type) { throw({forbidden: "type is required"}); }
                  if (oldDoc && oldDoc.owner !== doc.owner) { throw({forbidden: "owner is fixed"}); }
                  channel("t." + doc.type);
                  access(doc.owner, "t." + doc.type);
                }
                """,
            poolSize: 1, timeLimit: .milliseconds(500))
        let storage = try SQLiteGatewayStorage(location: .memory, databaseName: "batch")
        let store = DocumentStore(storage: storage, router: sync)
        let first = try store.put(id: "kept", body: ["type": "list", "owner": "alice"])
        let results = await store.bulkDocs(
            [
                ["_id": "a", "type": "list", "owner": "alice"],
                ["_id": "b", "owner": "alice", "_attachments": ["x.txt": ["data": "cmVmdXNlZA=="]]],
                ["_id": "kept", "_rev": .string(first.description), "type": "list", "owner": "bob"],
                ["_id": "loop", "type": "list", "loop": true],
                ["_id": "kept", "_rev": .string(first.description), "type": "task", "owner": "alice"],
                ["_id": "c", "_rev": "1-abc", "type": "list", "owner": "carol"],
            ],
            newEdits: true, user: nil)
        #expect(results[0]["id"] == "a" && results[0]["rev"] != nil)
        #expect(results[1]["status"] == 403 && results[1]["reason"] == "type is required")
        #expect(results[2]["status"] == 403 && results[2]["reason"] == "owner is fixed")
        #expect(results[3]["status"] == 500 && results[3]["reason"] == "JS sync function timed out")
        #expect(results[4]["id"] == "kept" && results[4]["rev"]?.stringValue?.hasPrefix("2-") == true)
        #expect(results[5]["status"] == 409)
        let kept = try #require(try storage.document(id: "kept"))
        #expect(kept.winner?.id.generation == 2)
        #expect(kept.access == ["alice": ["t.task"]])
        #expect(try storage.document(id: "b") == nil)
        // The refused revision's attachment ("refused") was not stored either.
        #expect(try storage.attachment(digest: AttachmentDigest.sha1(of: Array("refused".utf8)).description) == nil)
        #expect(try storage.document(id: "loop") == nil)
        #expect(try storage.document(id: "a")?.channels.values.first == ["t.list"])
    }
}
