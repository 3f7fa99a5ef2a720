import CouchetteCore
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - CouchDBFeedFidelityTests

/// `_changes` and `_all_docs` options PouchDB and CouchDB clients send, answered as CouchDB 3 documents them.
@Suite("CouchDB API fidelity: feeds and listings", .timeLimit(.minutes(5)))
struct CouchDBFeedFidelityTests {
    static let config = GatewayFixture.config(databases: [GatewayFixture.guestDatabase("db")])

    /// `hello` as base64, and its MD5 as CouchDB names it.
    static let helloData = "aGVsbG8="
    static let helloMD5 = AttachmentDigest.md5(of: Array("hello".utf8)).description

    // MARK: - _changes

    @Test("_changes?style=all_docs lists the winner, then the other leaves in winning order (live before deleted)")
    func changesAllDocsOrder() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            let revisions: [JSONValue] = [
                ["_rev": "1-a", "v": 1], ["_rev": "1-b", "v": 2], ["_rev": "1-c", "v": 3],
                ["_rev": "2-d", "_deleted": true, "_revisions": ["start": 2, "ids": ["d", "c"]]],
            ]
            try await client.putRevisions(revisions, id: "x", port: port)
            let feed = try await client.send(port: port, path: "/db/_changes?style=all_docs").jsonValue()
            let row = try #require(feed["results"]?.arrayValue?.first { $0["id"] == "x" })
            // Leaves 1-a, 1-b and the deleted 2-d: the winner is the highest live leaf.
            #expect(row["changes"] == [["rev": "1-b"], ["rev": "1-a"], ["rev": "2-d"]])
        }
    }

    @Test("filter=_doc_ids works with longpoll and continuous feeds, and doc_ids may come in a POST body")
    func documentIDsFilterOnEveryFeed() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            let start = try await client.send(port: port, path: "/db/").jsonValue()["update_seq"]?.intValue ?? -1
            let longpoll = Task {
                try await client.send(
                    port: port, path: "/db/_changes?feed=longpoll&since=\(start)&filter=_doc_ids&doc_ids=%5B%22want%22%5D")
            }
            // The feed starts after `start`, so it sees both writes whenever it begins; it answers on `want` only.
            #expect(try await client.send("PUT", port: port, path: "/db/other", json: ["v": 1]).status == 201)
            #expect(try await client.send("PUT", port: port, path: "/db/want", json: ["v": 2]).status == 201)
            let longpollRows = try await longpoll.value.jsonValue()["results"]?.arrayValue ?? []
            #expect(longpollRows.map { $0["id"] } == ["want"])

            let continuous = try await client.send(
                port: port, path: "/db/_changes?feed=continuous&since=\(start)&filter=_doc_ids&doc_ids=other&limit=1")
            let lines = continuous.text.split(separator: "\n").filter { !$0.isEmpty }
            #expect(lines.count == 1)
            #expect(try JSONValue(parsing: String(lines[0]))["id"] == "other")

            let posted = try await client.send(
                "POST", port: port, path: "/db/_changes",
                json: ["filter": "_doc_ids", "doc_ids": ["want", "missing"], "since": .int(Int64(start))])
            #expect(posted.status == 200)
            #expect(try posted.jsonValue()["results"]?.arrayValue?.map { $0["id"] } == ["want"])
        }
    }

    @Test("_changes?descending=true lists newest first and limit keeps the newest; other feeds refuse it")
    func changesDescending() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            for id in ["a", "b", "c"] {
                #expect(try await client.send("PUT", port: port, path: "/db/\(id)", json: ["v": 1]).status == 201)
            }
            let all = try await client.send(port: port, path: "/db/_changes?descending=true").jsonValue()
            #expect(all["results"]?.arrayValue?.map { $0["id"] } == ["c", "b", "a"])
            let newest = try await client.send(port: port, path: "/db/_changes?descending=true&limit=2").jsonValue()
            let rows = try #require(newest["results"]?.arrayValue)
            #expect(rows.map { $0["id"] } == ["c", "b"])
            // As in CouchDB, last_seq is the last row's: the oldest sent.
            #expect(newest["last_seq"]?.stringValue == rows[1]["seq"]?.intValue.map { String($0) })
            let longpoll = try await client.send(port: port, path: "/db/_changes?descending=true&feed=longpoll")
            #expect(longpoll.status == 400)
        }
    }

    @Test("since=now starts at the latest change: nothing earlier is sent, and limit counts what comes after")
    func changesSinceNow() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            #expect(try await client.send("PUT", port: port, path: "/db/old", json: ["v": 1]).status == 201)
            let latest = try await client.send(port: port, path: "/db/").jsonValue()["update_seq"]?.intValue
            let normal = try await client.send(port: port, path: "/db/_changes?since=now").jsonValue()
            #expect(normal["results"] == [])
            #expect(normal["last_seq"]?.stringValue == latest.map { String($0) })

            let finished = Mutex(false)
            let feed = Task {
                defer { finished.withLock { $0 = true } }
                return try await client.send(
                    port: port, path: "/db/_changes?feed=continuous&since=now&limit=1&timeout=0")
            }
            // Whenever the feed begins, a write after it ends it: keep writing until it answers.
            var written = 0
            while !finished.withLock({ $0 }), written < 10_000 {
                #expect(try await client.send("PUT", port: port, path: "/db/new\(written)", json: ["v": 1]).status == 201)
                written += 1
            }
            let lines = try await feed.value.text.split(separator: "\n").filter { !$0.isEmpty }
            #expect(lines.count == 1)
            let row = try JSONValue(parsing: String(lines[0]))
            #expect(row["id"]?.stringValue?.hasPrefix("new") == true)
        }
    }

    @Test("seq_interval=N: only every Nth entry and the last carry their seq, the others null; last_seq as always")
    func changesSequenceInterval() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            for index in 1...5 {
                #expect(try await client.send("PUT", port: port, path: "/db/d\(index)", json: ["v": 1]).status == 201)
            }
            for feed in ["normal", "longpoll"] {
                let reply = try await client.send(port: port, path: "/db/_changes?seq_interval=2&feed=\(feed)")
                let body = try reply.jsonValue()
                let seqs = try #require(body["results"]?.arrayValue).map { $0["seq"] }
                #expect(seqs.count == 5)
                #expect(seqs[0] == .null && seqs[2] == .null && seqs[1] != .null && seqs[3] != .null)
                #expect(seqs[4]?.intValue.map { String($0) } == body["last_seq"]?.stringValue)
            }
            let plain = try await client.send(port: port, path: "/db/_changes").jsonValue()
            #expect(plain["results"]?.arrayValue?.allSatisfy { $0["seq"]?.intValue != nil } == true)
        }
    }

    // MARK: - Inline attachments and conflicts in listings

    @Test("attachments=true with include_docs inlines attachment data on _changes and _all_docs; conflicts=true on _all_docs")
    func listingsWithAttachmentsAndConflicts() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            try await client.putTextAttachment(id: "att", port: port)
            try await client.putRevisions([["_rev": "1-a", "v": 1], ["_rev": "1-b", "v": 2]], id: "c", port: port)

            let changes = try await client.send(port: port, path: "/db/_changes?include_docs=true&attachments=true")
            let changed = try #require(try changes.jsonValue()["results"]?.arrayValue?.first { $0["id"] == "att" })
            #expect(changed["doc"]?["_attachments"]?["a.txt"]?["data"]?.stringValue == Self.helloData)
            #expect(changed["doc"]?["_attachments"]?["a.txt"]?["stub"] == nil)

            let listed = try await client.send(
                port: port, path: "/db/_all_docs?include_docs=true&attachments=true&conflicts=true")
            let rows = try #require(try listed.jsonValue()["rows"]?.arrayValue)
            let attachmentRow = try #require(rows.first { $0["id"] == "att" })
            #expect(attachmentRow["doc"]?["_attachments"]?["a.txt"]?["data"]?.stringValue == Self.helloData)
            let conflictRow = try #require(rows.first { $0["id"] == "c" })
            #expect(conflictRow["doc"]?["_conflicts"] == ["1-a"])

            let stubs = try await client.send(port: port, path: "/db/_all_docs?include_docs=true").jsonValue()
            let stubRow = try #require(stubs["rows"]?.arrayValue?.first { $0["id"] == "att" })
            #expect(stubRow["doc"]?["_attachments"]?["a.txt"]?["stub"] == true)
            #expect(stubs["rows"]?.arrayValue?.first { $0["id"] == "c" }?["doc"]?["_conflicts"] == nil)
        }
    }

    @Test("A CouchDB peer's md5- digests are accepted, for new data and for stubs of stored attachments")
    func couchDBDigests() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            let first: JSONValue = [
                "_rev": "1-a",
                "_attachments": [
                    "a.txt": [
                        "content_type": "text/plain", "data": .string(Self.helloData), "digest": .string(Self.helloMD5),
                        "revpos": 1,
                    ]
                ],
            ]
            #expect(try await client.send("PUT", port: port, path: "/db/m?new_edits=false", json: first).status == 201)
            // The next revision names the attachment by CouchDB's digest only, as a stub.
            let second: JSONValue = [
                "_rev": "2-b", "_revisions": ["start": 2, "ids": ["b", "a"]], "v": 2,
                "_attachments": [
                    "a.txt": [
                        "content_type": "text/plain", "stub": true, "digest": .string(Self.helloMD5), "length": 5,
                        "revpos": 1,
                    ]
                ],
            ]
            let stored = try await client.send("PUT", port: port, path: "/db/m?new_edits=false", json: second)
            #expect(stored.status == 201, "\(stored.text)")
            #expect(try await client.send(port: port, path: "/db/m/a.txt").text == "hello")
            // A stub whose MD5 does not match the stored bytes is refused.
            var wrong = second
            wrong["_rev"] = "3-c"
            wrong["_revisions"] = ["start": 3, "ids": ["c", "b", "a"]]
            wrong["_attachments"] = [
                "a.txt": [
                    "stub": true, "digest": .string(AttachmentDigest.md5(of: Array("other".utf8)).description),
                    "revpos": 1,
                ]
            ]
            #expect(try await client.send("PUT", port: port, path: "/db/m?new_edits=false", json: wrong).status == 400)
            // att_encoding_info=true: attachments are stored as sent (decoded), so stubs name no encoding.
            let info = try await client.send(port: port, path: "/db/m?att_encoding_info=true")
            #expect(info.status == 200)
            #expect(try info.jsonValue()["_attachments"]?["a.txt"]?["encoding"] == nil)
        }
    }
}
