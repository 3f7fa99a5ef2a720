import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - CouchDBFidelityTests

/// Calls PouchDB and CouchDB clients make, answered as CouchDB 3 documents them.
@Suite("CouchDB API fidelity", .timeLimit(.minutes(5)))
struct CouchDBFidelityTests {
    static let config = GatewayFixture.config(databases: [GatewayFixture.guestDatabase("db")])

    @Test("PUT /{db}/ answers {\"ok\": true}; _ensure_full_commit 201 {\"ok\": true}")
    func databaseCreationAnswersJSON() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let created = try await client.send("PUT", port: ports.adminPort, path: "/other/", json: [:])
            #expect(created.status == 201)
            #expect(try created.jsonValue() == ["ok": true])
            let commit = try await client.send("POST", port: ports.publicPort, path: "/db/_ensure_full_commit")
            #expect(commit.status == 201)
            #expect(try commit.jsonValue()["ok"] == true)
        }
    }

    @Test("GET /{db}/ reports doc_count, doc_del_count and sizes")
    func databaseInfoCounts() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            for id in ["a", "b", "c"] {
                #expect(try await client.send("PUT", port: port, path: "/db/\(id)", json: ["v": .string(id)]).status == 201)
            }
            // Read before each change too: the counts are kept between reads until the storage changes a row.
            let first = try await client.send(port: ports.publicPort, path: "/db/").jsonValue()
            #expect(first["doc_count"] == 3 && first["doc_del_count"] == 0)
            let rev = try await client.send(port: port, path: "/db/c").jsonValue()["_rev"]?.stringValue ?? ""
            #expect(try await client.send("DELETE", port: port, path: "/db/c?rev=\(rev)").status == 200)
            let info = try await client.send(port: ports.publicPort, path: "/db/").jsonValue()
            #expect(info["doc_count"] == 2)
            #expect(info["doc_del_count"] == 1)
            #expect(try await client.send("POST", port: port, path: "/db/_purge", json: ["a": ["*"]]).status == 200)
            let purged = try await client.send(port: ports.publicPort, path: "/db/").jsonValue()
            #expect(purged["doc_count"] == 1 && purged["doc_del_count"] == 1)
            #expect(try #require(purged["sizes"]?["external"]?.intValue) < (info["sizes"]?["external"]?.intValue ?? 0))
            let sizes = try #require(info["sizes"])
            let file = try #require(sizes["file"]?.intValue)
            let active = try #require(sizes["active"]?.intValue)
            let external = try #require(sizes["external"]?.intValue)
            #expect(file > 0 && active > 0 && active <= file && external > 0)
            #expect(info["update_seq"] != nil && info["purge_seq"] == 0 && info["instance_start_time"] != nil)
            #expect(info["compact_running"] == false)
        }
    }

    @Test("_revs_limit: GET the number, PUT a positive integer (admin) takes effect; anything else is 400")
    func revsLimit() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            #expect(try await client.send(port: ports.publicPort, path: "/db/_revs_limit").text == "1000")
            let set = try await client.send("PUT", port: ports.adminPort, path: "/db/_revs_limit", body: Array("5".utf8))
            let setBody = try set.jsonValue()
            #expect(set.status == 200 && setBody == ["ok": true], "\(set.text)")
            #expect(try await client.send(port: ports.adminPort, path: "/db/_revs_limit").text == "5")
            for body in ["0", "-3", "\"7\"", "2.5", "{}"] {
                let bad = try await client.send("PUT", port: ports.adminPort, path: "/db/_revs_limit", body: Array(body.utf8))
                #expect(bad.status == 400, "\(body)")
            }
            // The limit applies: after 8 edits only 5 revisions of history are kept.
            var rev: String?
            for index in 0..<8 {
                var body: [String: JSONValue] = ["n": .int(Int64(index))]
                if let rev { body["_rev"] = .string(rev) }
                rev = try await client.send("PUT", port: ports.adminPort, path: "/db/d", json: .object(body)).jsonValue()["rev"]?.stringValue
            }
            let revisions = try await client.send(port: ports.adminPort, path: "/db/d?revs=true").jsonValue()["_revisions"]
            #expect(revisions?["ids"]?.arrayValue?.count == 5)
            #expect(try await client.send("PUT", port: ports.publicPort, path: "/db/_revs_limit", body: Array("9".utf8)).status != 200)
        }
    }

    @Test("_missing_revs lists the offered revisions the database lacks")
    func missingRevs() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let rev = try await client.send("PUT", port: ports.publicPort, path: "/db/a", json: ["v": 1]).jsonValue()["rev"]?
                .stringValue ?? ""
            let reply = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_missing_revs",
                json: ["a": [.string(rev), "2-b"], "nothere": ["1-x"]])
            #expect(reply.status == 200)
            #expect(try reply.jsonValue() == ["missing_revs": ["a": ["2-b"], "nothere": ["1-x"]]])
            let none = try await client.send(
                "POST", port: ports.publicPort, path: "/db/_missing_revs", json: ["a": [.string(rev)]])
            #expect(try none.jsonValue() == ["missing_revs": [:]])
        }
    }

    @Test("HEAD and GET of a document carry its ETag; If-None-Match with it is 304")
    func conditionalReads() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            let rev = try await client.send("PUT", port: port, path: "/db/a", json: ["v": 1]).jsonValue()["rev"]?.stringValue ?? ""
            let head = try await client.send("HEAD", port: port, path: "/db/a")
            #expect(head.status == 200 && head.header("ETag") == "\"\(rev)\"")
            let notModified = try await client.send(port: port, path: "/db/a", headers: ["If-None-Match": "\"\(rev)\""])
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            let stale = try await client.send(port: port, path: "/db/a", headers: ["If-None-Match": "\"1-other\""])
            #expect(stale.status == 200)
        }
    }

    @Test("_all_docs: key, keys, descending bounds, inclusive_end, skip and limit; total_rows counts every visible document")
    func allDocsOptions() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            for id in ["a", "b", "c", "d", "e"] {
                #expect(try await client.send("PUT", port: port, path: "/db/\(id)", json: ["v": 1]).status == 201)
            }
            #expect(try await client.send("PUT", port: port, path: "/db/_local/x", json: ["v": 1]).status == 201)
            func ids(_ query: String) async throws -> ([String], JSONValue) {
                let reply = try await client.send(port: port, path: "/db/_all_docs?\(query)")
                #expect(reply.status == 200, "\(query): \(reply.text)")
                let json = try reply.jsonValue()
                let rows = json["rows"]?.arrayValue ?? []
                return (rows.compactMap { $0["id"]?.stringValue ?? $0["key"]?.stringValue }, json)
            }
            var (found, json) = try await ids("key=%22b%22")
            #expect(found == ["b"] && json["total_rows"] == 5)
            #expect(json["update_seq"] == nil)
            (found, json) = try await ids("keys=%5B%22d%22,%22zz%22,%22a%22%5D&descending=true&limit=2")
            #expect(found == ["a", "zz"], "\(json)")
            #expect(json["rows"]?[1]?["error"] == "not_found")
            (found, json) = try await ids("descending=true&startkey=%22d%22&endkey=%22b%22")
            #expect(found == ["d", "c", "b"])
            (found, _) = try await ids("startkey=%22a%22&endkey=%22d%22&inclusive_end=false&skip=1")
            #expect(found == ["b", "c"])
            (found, json) = try await ids("limit=2&update_seq=true")
            #expect(found == ["a", "b"] && json["total_rows"] == 5 && json["update_seq"] != nil)
            let mixed = try await client.send(port: port, path: "/db/_all_docs?keys=%5B%22a%22%5D&startkey=%22a%22")
            #expect(mixed.status == 400)
        }
    }

    @Test("GET with conflicts, deleted_conflicts, meta and local_seq adds CouchDB's members")
    func documentConflicts() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            try await client.putRevisions([["_rev": "1-a", "v": 1], ["_rev": "1-b", "v": 2], ["_rev": "1-c", "_deleted": true]], id: "c", port: port)
            let plain = try await client.send(port: port, path: "/db/c").jsonValue()
            #expect(plain["_rev"] == "1-b" && plain["_conflicts"] == nil)
            let conflicts = try await client.send(port: port, path: "/db/c?conflicts=true").jsonValue()
            #expect(conflicts["_conflicts"] == ["1-a"] && conflicts["_deleted_conflicts"] == nil)
            let deleted = try await client.send(port: port, path: "/db/c?deleted_conflicts=true").jsonValue()
            #expect(deleted["_deleted_conflicts"] == ["1-c"] && deleted["_conflicts"] == nil)
            let meta = try await client.send(port: port, path: "/db/c?meta=true&local_seq=true").jsonValue()
            #expect(meta["_conflicts"] == ["1-a"] && meta["_deleted_conflicts"] == ["1-c"] && meta["_revs_info"] != nil)
            #expect(meta["_local_seq"] == 3)
            // A losing revision read by rev gets no _conflicts (CouchDB lists them on the winner).
            let loser = try await client.send(port: port, path: "/db/c?rev=1-a&conflicts=true").jsonValue()
            #expect(loser["_rev"] == "1-a" && loser["_conflicts"] == nil)
            #expect(try await client.send(port: port, path: "/db/nothing?conflicts=true").status == 404)
        }
    }

    @Test("A tombstone keeps the body it was written with, readable with ?rev=")
    func tombstoneBodies() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            let replicated = try await client.send(
                "PUT", port: port, path: "/db/foo?new_edits=false",
                json: ["_rev": "1-abc", "_deleted": true, "integer": 4])
            #expect(replicated.status == 201)
            let read = try await client.send(port: port, path: "/db/foo?rev=1-abc").jsonValue()
            #expect(read == ["_id": "foo", "_rev": "1-abc", "_deleted": true, "integer": 4])
            let rev = try await client.send("PUT", port: port, path: "/db/bar", json: ["v": 1]).jsonValue()["rev"]?.stringValue ?? ""
            let deleted = try await client.send(
                "PUT", port: port, path: "/db/bar", json: ["_rev": .string(rev), "_deleted": true, "reason": "done"])
            let tombstone = try #require(try deleted.jsonValue()["rev"]?.stringValue)
            #expect(try await client.send(port: port, path: "/db/bar").status == 404)
            let kept = try await client.send(port: port, path: "/db/bar?rev=\(tombstone)").jsonValue()
            #expect(kept["reason"] == "done" && kept["_deleted"] == true)
        }
    }

    @Test("Setting data on an attachment read back as a stub replaces it (stale length, digest and stub ignored)")
    func inlineAttachmentReplacement() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            try await client.putTextAttachment(id: "att", port: port)
            var document = try await client.send(port: port, path: "/db/att").jsonValue()
            guard case .object(var members) = document, case .object(var attachments)? = members["_attachments"],
                case .object(var entry)? = attachments["a.txt"]
            else {
                Issue.record("no attachment stub: \(document)")
                return
            }
            #expect(entry["stub"] == true && entry["length"] == 5)
            entry["data"] = .string(Data("world wide".utf8).base64EncodedString())
            attachments["a.txt"] = .object(entry)
            members["_attachments"] = .object(attachments)
            document = .object(members)
            let replaced = try await client.send("PUT", port: port, path: "/db/att", json: document)
            #expect(replaced.status == 201, "\(replaced.text)")
            #expect(try await client.send(port: port, path: "/db/att/a.txt").text == "world wide")
            let stub = try await client.send(port: port, path: "/db/att").jsonValue()["_attachments"]?["a.txt"]
            #expect(stub?["length"] == 10 && stub?["revpos"] == 2)
        }
    }

    @Test("_changes with include_docs and conflicts=true lists each document's conflicts")
    func changesConflicts() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            try await client.putRevisions([["_rev": "1-a", "v": 1], ["_rev": "1-b", "v": 2]], id: "c", port: port)
            let reply = try await client.send(port: port, path: "/db/_changes?include_docs=true&conflicts=true")
            let row = try #require(try reply.jsonValue()["results"]?.arrayValue?.first { $0["id"] == "c" })
            #expect(row["doc"]?["_conflicts"] == ["1-a"], "\(reply.text)")
            let plain = try await client.send(port: port, path: "/db/_changes?include_docs=true")
            #expect(try plain.jsonValue()["results"]?.arrayValue?.first { $0["id"] == "c" }?["doc"]?["_conflicts"] == nil)
        }
    }

    @Test("HEAD and GET of an attachment carry its digest as ETag; If-None-Match with it is 304")
    func attachmentConditionalReads() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            try await client.putTextAttachment(id: "att", port: port)
            let head = try await client.send("HEAD", port: port, path: "/db/att/a.txt")
            let etag = try #require(head.header("ETag"))
            #expect(head.status == 200 && etag.hasPrefix("\"sha1-"))
            let notModified = try await client.send(port: port, path: "/db/att/a.txt", headers: ["If-None-Match": etag])
            #expect(notModified.status == 304 && notModified.body.isEmpty)
        }
    }

    @Test("_session answers GET with userCtx, as CouchDB clients read it")
    func sessionUserContext() async throws {
        let database = DatabaseConfig(name: "db", users: ["alice": UserConfig(name: "alice", password: "pass", adminChannels: ["a"])])
        try await GatewayFixture.withRunningGateway(GatewayFixture.config(databases: [database])) { client, ports in
            let anonymous = try await client.send(port: ports.publicPort, path: "/db/_session").jsonValue()
            #expect(anonymous["ok"] == true && anonymous["userCtx"]?["name"] == .null)
            let alice = try await client.send(port: ports.publicPort, path: "/db/_session", user: ("alice", "pass")).jsonValue()
            #expect(alice["ok"] == true && alice["userCtx"]?["name"] == "alice")
        }
    }

    @Test("_local documents: delete then get is 404, put after delete starts at 0-1 again, a second delete is 404")
    func localDocuments() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            func put(_ body: JSONValue) async throws -> JSONValue? {
                try await client.send("PUT", port: port, path: "/db/_local/q", json: body).jsonValue()["rev"]
            }
            func status(_ method: String, _ path: String) async throws -> Int {
                try await client.send(method, port: port, path: path).status
            }
            let first = try await put(["v": 1])
            let second = try await put(["_rev": "0-1", "v": 2])
            #expect(first == "0-1" && second == "0-2")
            let deleted = try await status("DELETE", "/db/_local/q?rev=0-2")
            let read = try await status("GET", "/db/_local/q")
            let again = try await status("DELETE", "/db/_local/q?rev=0-2")
            #expect(deleted == 200 && read == 404 && again == 404)
            let recreated = try await put(["v": 3])
            #expect(recreated == "0-1")
        }
    }

    @Test("Regression: a _local document is deleted by DELETE, by PUT with _deleted and by _bulk_docs, answering 0-0 as CouchDB")
    func localDeletions() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            #expect(try await client.send("PUT", port: port, path: "/db/_local/a", json: ["v": 1]).status == 201)
            let deleted = try await client.send("DELETE", port: port, path: "/db/_local/a?rev=0-1")
            #expect(try deleted.jsonValue() == ["ok": true, "id": "_local/a", "rev": "0-0"])

            #expect(try await client.send("PUT", port: port, path: "/db/_local/b", json: ["v": 1]).status == 201)
            let put = try await client.send("PUT", port: port, path: "/db/_local/b", json: ["_rev": "0-1", "_deleted": true])
            #expect(put.status == 201)
            #expect(try put.jsonValue()["rev"] == "0-0")
            #expect(try await client.send(port: port, path: "/db/_local/b").status == 404)

            #expect(try await client.send("PUT", port: port, path: "/db/_local/c", json: ["v": 1]).status == 201)
            let bulk = try await client.send(
                "POST", port: port, path: "/db/_bulk_docs",
                json: ["docs": [["_id": "_local/c", "_rev": "0-1", "_deleted": true]]])
            #expect(bulk.status == 201)
            #expect(try bulk.jsonValue()[0]?["rev"] == "0-0")
            #expect(try await client.send(port: port, path: "/db/_local/c").status == 404)
            // A wrong revision deletes nothing.
            #expect(try await client.send("PUT", port: port, path: "/db/_local/d", json: ["v": 1]).status == 201)
            let wrong = try await client.send("PUT", port: port, path: "/db/_local/d", json: ["_rev": "0-7", "_deleted": true])
            #expect(wrong.status == 409)
            #expect(try await client.send(port: port, path: "/db/_local/d").status == 200)
        }
    }
}
