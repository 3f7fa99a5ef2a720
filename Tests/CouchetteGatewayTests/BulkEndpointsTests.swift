import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - BulkEndpointsTests

/// `_bulk_docs`, `_all_docs`, `_revs_diff` and `_local` over real sockets.
@Suite("Bulk endpoints over HTTP", .timeLimit(.minutes(5)))
struct BulkEndpointsTests {
    /// A database with a user who reads channel `a` only, and GUEST off.
    static let config = GatewayFixture.config(databases: [
        DatabaseConfig(name: "db", users: ["alice": UserConfig(name: "alice", password: "pass", adminChannels: ["a"])])
    ])
    static let alice = ("alice", "pass")

    @Test("_bulk_docs returns one result per document in order, with per-document errors")
    func bulkDocsResults() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let first = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_bulk_docs",
                json: ["docs": [["_id": "x", "channels": ["a"]]]], user: Self.alice)
            #expect(first.status == 201)
            let reply = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_bulk_docs",
                json: [
                    "docs": [
                        ["type": "task-list", "name": "Groceries"],
                        ["_id": "_bad", "a": 1],
                        ["_id": "x", "b": 2],
                        ["_id": "_local/checkpoint", "seq": 3],
                        ["names": "Today", "_secret": 1],
                    ]
                ], user: Self.alice)
            #expect(reply.status == 201)
            let results = try #require(try reply.jsonValue().arrayValue)
            #expect(results.count == 5)
            let generated = try #require(results[0]["id"]?.stringValue)
            #expect(generated.count == 32 && generated.allSatisfy(\.isHexDigit))
            #expect(results[0]["rev"]?.stringValue?.hasPrefix("1-") == true)
            #expect(results[1] == ["id": "_bad", "error": "bad_request", "reason": "Invalid doc ID", "status": 400])
            #expect(results[2] == ["id": "x", "error": "conflict", "reason": "Document exists", "status": 409])
            // A failed document without an `_id` gets no `id` in its result (the seeds' Sync Gateway answers).
            #expect(results[3]["id"] == nil)
            #expect(results[3]["status"] == 400)
            // Local documents come last.
            #expect(results[4] == ["id": "_local/checkpoint", "rev": "0-1"])

            let bad = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_bulk_docs", json: ["documents": []], user: Self.alice)
            #expect(bad.status == 400)
            #expect(try bad.jsonValue()["reason"] == "missing 'docs' property")
        }
    }

    @Test("_bulk_docs without _rev on stored documents: a deleted one is made again on its tombstone; a live one is a conflict, even where the sync function would refuse it as new")
    func bulkDocsWithoutRevisionOnStoredDocuments() async throws {
        let sync = """
            function (doc, oldDoc) {
                if (!oldDoc && !doc.initial) throw({forbidden: "only initial documents are made"});
                channel("a");
            }
            """
        let config = GatewayFixture.config(databases: [DatabaseConfig(name: "db", sync: sync)])
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let made = try await client.send(
                "POST", port: ports.adminPort, path: "/db/_bulk_docs",
                json: ["docs": [["_id": "live", "initial": true], ["_id": "gone", "initial": true]]])
            let madeResults = try #require(try made.jsonValue().arrayValue)
            let goneRevision = try #require(madeResults[1]["rev"]?.stringValue)
            #expect(try await client.send("DELETE", port: ports.adminPort, path: "/db/gone?rev=\(goneRevision)").status == 200)

            let reply = try await client.send(
                "POST", port: ports.adminPort, path: "/db/_bulk_docs",
                json: [
                    "docs": [
                        ["_id": "live", "v": 2], ["_id": "gone", "initial": true, "v": 2], ["_id": "fresh", "initial": true],
                        ["_id": "refused"],
                    ]
                ])
            let results = try #require(try reply.jsonValue().arrayValue)
            #expect(results.count == 4)
            #expect(results[0] == ["id": "live", "error": "conflict", "reason": "Document exists", "status": 409])
            #expect(results[1]["rev"]?.stringValue?.hasPrefix("3-") == true, "\(results[1])")
            #expect(results[2]["rev"]?.stringValue?.hasPrefix("1-") == true, "\(results[2])")
            #expect(results[3]["status"] == 403)
            let live = try await client.send(port: ports.adminPort, path: "/db/live")
            #expect(try live.jsonValue()["v"] == nil)
            let gone = try await client.send(port: ports.adminPort, path: "/db/gone")
            #expect(try gone.jsonValue()["v"] == 2)
        }
    }

    @Test("_bulk_docs with new_edits=false inserts revisions with their history, creating conflicts")
    func bulkDocsNewEditsFalse() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let docs: JSONValue = [
                "new_edits": false,
                "docs": [
                    ["_id": "d", "_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]], "v": 1],
                    ["_id": "d", "_rev": "2-c", "_revisions": ["start": 2, "ids": ["c", "a"]], "v": 2],
                    ["_id": "e", "_rev": "3-z", "_revisions": ["start": 3, "ids": ["z", "y"]], "v": 3],
                    ["_id": "f", "v": 4],
                    ["_id": "g", "_rev": "2-x", "_revisions": ["start": 2, "ids": "x"]],
                ],
            ]
            let reply = try await client.send("POST", port: ports.adminPort, path: "/db/_bulk_docs", json: docs)
            #expect(reply.status == 201)
            let results = try #require(try reply.jsonValue().arrayValue)
            #expect(results[0] == ["id": "d", "rev": "2-b"])
            #expect(results[1] == ["id": "d", "rev": "2-c"])
            #expect(results[2] == ["id": "e", "rev": "3-z"])
            #expect(results[3]["status"] == 400)
            #expect(results[4]["status"] == 400)
            #expect(results[4]["reason"] == "Bad _revisions")

            let open = try await client.send(port: ports.adminPort, path: "/db/d?open_revs=all")
            let leaves = try #require(try open.jsonValue().arrayValue).compactMap { $0["ok"]?["_rev"]?.stringValue }
            #expect(Set(leaves) == ["2-b", "2-c"])
            // The deterministic winner is the higher revision ID.
            #expect(try await client.send(port: ports.adminPort, path: "/db/d").jsonValue()["_rev"] == "2-c")
        }
    }

    @Test("_all_docs lists live documents by ID with options, filtered by the user's channels")
    func allDocs() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let docs: JSONValue = [
                "docs": [
                    ["_id": "a1", "channels": ["a"]], ["_id": "a2", "channels": ["a"]], ["_id": "b1", "channels": ["b"]],
                    ["_id": "a3", "channels": ["a"]], ["_id": "gone", "channels": ["a"]],
                ]
            ]
            let written = try await client.send("POST", port: ports.adminPort, path: "/db/_bulk_docs", json: docs)
            let goneRev = try #require(try written.jsonValue()[4]?["rev"]?.stringValue)
            let deleted = try await client.send("DELETE", port: ports.adminPort, path: "/db/gone?rev=\(goneRev)")
            #expect(deleted.status == 200)

            let admin = try await client.send(port: ports.adminPort, path: "/db/_all_docs?channels=true").jsonValue()
            let adminRows = try #require(admin["rows"]?.arrayValue)
            #expect(adminRows.compactMap { $0["id"]?.stringValue } == ["a1", "a2", "a3", "b1"])
            #expect(adminRows[3]["value"]?["channels"] == ["b"])
            #expect(admin["total_rows"] == 4)
            #expect(admin["update_seq"] == nil)  // CouchDB: only with update_seq=true
            let withSequence = try await client.send(port: ports.adminPort, path: "/db/_all_docs?update_seq=true")
            #expect(try withSequence.jsonValue()["update_seq"] == 6)

            let user = try await client.send(
                port: ports.publicPort, path: "/db/_all_docs?include_docs=true&limit=2", user: Self.alice
            ).jsonValue()
            let userRows = try #require(user["rows"]?.arrayValue)
            #expect(userRows.compactMap { $0["id"]?.stringValue } == ["a1", "a2"])
            #expect(userRows[0]["doc"]?["_id"] == "a1")
            #expect(userRows[0]["doc"]?["channels"] == ["a"])

            let range = try await client.send(
                port: ports.publicPort, path: "/db/_all_docs?startkey=%22a2%22&endkey=b9", user: Self.alice
            ).jsonValue()
            #expect(range["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a2", "a3"])

            let keys = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_all_docs", json: ["keys": ["a1", "b1", "nope", "gone"]],
                user: Self.alice
            ).jsonValue()
            let keyRows = try #require(keys["rows"]?.arrayValue)
            #expect(keyRows[0]["id"] == "a1")
            #expect(keyRows[1] == ["key": "b1", "error": "forbidden", "status": 403])
            #expect(keyRows[2] == ["key": "nope", "error": "not_found", "status": 404])
            #expect(keyRows[3]["value"]?["deleted"] == true)

            let badKeys = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_all_docs", json: ["keys": "a1"], user: Self.alice)
            #expect(badKeys.status == 400)
            #expect(try badKeys.jsonValue()["reason"] == "Bad/missing keys")
        }
    }

    @Test("_revs_diff reports missing revisions and possible ancestors")
    func revsDiff() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let put = try await client.send("PUT", port: ports.adminPort, path: "/db/doc", json: ["v": 1])
            let rev = try #require(try put.jsonValue()["rev"]?.stringValue)
            let reply = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_revs_diff",
                json: ["doc": [.string(rev), "2-abc"], "other": ["1-x"]], user: Self.alice)
            #expect(reply.status == 200)
            #expect(
                try reply.jsonValue() == [
                    "doc": ["missing": ["2-abc"], "possible_ancestors": [.string(rev)]],
                    "other": ["missing": ["1-x"]],
                ])
            let bad = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_revs_diff", json: ["doc": "1-x"], user: Self.alice)
            #expect(bad.status == 400)
        }
    }

    @Test("_local documents: create, update with _rev, conflicts, delete; never in _all_docs")
    func localDocuments() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            let created = try await client.send(
                "PUT", port: port, path: "/db/_local/cp%2F1", json: ["seq": 1, "_junk": 2], user: Self.alice)
            #expect(created.status == 201)
            #expect(try created.jsonValue() == ["ok": true, "id": "_local/cp/1", "rev": "0-1"])
            let read = try await client.send(port: port, path: "/db/_local/cp%2F1", user: Self.alice)
            #expect(try read.jsonValue() == ["_id": "_local/cp/1", "_rev": "0-1", "seq": 1])

            let stale = try await client.send(
                "PUT", port: port, path: "/db/_local/cp%2F1", json: ["seq": 2], user: Self.alice)
            #expect(stale.status == 409)
            let updated = try await client.send(
                "PUT", port: port, path: "/db/_local/cp%2F1", json: ["_rev": "0-1", "seq": 2], user: Self.alice)
            #expect(try updated.jsonValue()["rev"] == "0-2")
            let phantom = try await client.send(
                "PUT", port: port, path: "/db/_local/none", json: ["_rev": "0-1"], user: Self.alice)
            #expect(phantom.status == 404)
            #expect(try phantom.jsonValue()["reason"] == "No previous revision to replace")

            let allDocs = try await client.send(port: ports.adminPort, path: "/db/_all_docs").jsonValue()
            #expect(allDocs["rows"]?.arrayValue?.isEmpty == true)

            let wrongDelete = try await client.send("DELETE", port: port, path: "/db/_local/cp%2F1?rev=0-1", user: Self.alice)
            #expect(wrongDelete.status == 409)
            let deleted = try await client.send("DELETE", port: port, path: "/db/_local/cp%2F1?rev=0-2", user: Self.alice)
            #expect(deleted.status == 200)
            #expect(try await client.send(port: port, path: "/db/_local/cp%2F1", user: Self.alice).status == 404)
        }
    }
}

// MARK: - open_revs latest

extension BulkEndpointsTests {
    @Test("open_revs with latest=true answers the winning leaf descending from each revision")
    func openRevsLatest() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let docs: JSONValue = [
                "new_edits": false,
                "docs": [
                    ["_id": "d", "_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", "b", "a"]], "v": 3],
                    ["_id": "d", "_rev": "2-x", "_revisions": ["start": 2, "ids": ["x", "a"]], "v": 2],
                ],
            ]
            _ = try await client.send("POST", port: ports.adminPort, path: "/db/_bulk_docs", json: docs)
            let path = "/db/d?open_revs=%5B%222-b%22,%223-c%22,%221-a%22,%229-z%22%5D&latest=true"
            let reply = try await client.send(port: ports.adminPort, path: path, headers: ["Accept": "application/json"])
            let results = try #require(try reply.jsonValue().arrayValue)
            // 2-b and 3-c both lead to 3-c (listed once); 1-a's winning descendant is 3-c too; 9-z is missing.
            #expect(results.compactMap { $0["ok"]?["_rev"]?.stringValue } == ["3-c"])
            #expect(results.compactMap { $0["missing"]?.stringValue } == ["9-z"])
            let plain = try await client.send(
                port: ports.adminPort, path: "/db/d?open_revs=%5B%222-b%22%5D", headers: ["Accept": "application/json"])
            #expect(try plain.jsonValue()[0]?["missing"] == "2-b")
        }
    }
}
