import CompressNIO
import CouchetteCore
import Foundation
import NIOCore
import Testing

@testable import CouchetteGateway

// MARK: - BadInputTests

/// Bad requests get a clear error with the right status and change nothing.
@Suite("Bad input over HTTP", .timeLimit(.minutes(5)))
struct BadInputTests {
    static let config: GatewayConfig = {
        var config = GatewayFixture.config(databases: [
            DatabaseConfig(name: "db", users: ["alice": UserConfig(name: "alice", password: "pass", adminChannels: ["*"])])
        ])
        config.maxRequestBodySize = 4_096
        return config
    }()
    static let alice = ("alice", "pass")

    @Test("Malformed JSON, wrong content type, oversized and empty bodies are refused; the document is unchanged")
    func malformedBodies() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            let created = try await client.send("PUT", port: port, path: "/db/doc", json: ["v": 1], user: Self.alice)
            #expect(created.status == 201)

            let json = ["Content-Type": "application/json"]
            let malformed = try await client.send(
                "PUT", port: port, path: "/db/doc2", headers: json, body: Array(#"{"v": 1,"#.utf8), user: Self.alice)
            #expect(malformed.status == 400)
            #expect(try malformed.jsonValue()["error"] == "Bad Request")
            #expect(try malformed.jsonValue()["reason"]?.stringValue?.hasPrefix("Bad JSON") == true)

            let form = try await client.send(
                "PUT", port: port, path: "/db/doc2", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array(#"{"v":1}"#.utf8), user: Self.alice)
            #expect(form.status == 415)

            let huge = try await client.send(
                "PUT", port: port, path: "/db/doc2", json: ["v": .string(String(repeating: "x", count: 10_000))],
                user: Self.alice)
            #expect(huge.status == 413)

            let empty = try await client.send("PUT", port: port, path: "/db/doc2", headers: json, body: [], user: Self.alice)
            #expect(empty.status == 400)

            let array = try await client.send("PUT", port: port, path: "/db/doc2", json: [1, 2], user: Self.alice)
            #expect(array.status == 400)

            let underscore = try await client.send("PUT", port: port, path: "/db/doc2", json: ["_x": 1], user: Self.alice)
            #expect(underscore.status == 400)
            #expect(
                try underscore.jsonValue()["reason"]
                    == "user defined top level properties beginning with '_' are not allowed in document body")

            #expect(try await client.send(port: port, path: "/db/doc2", user: Self.alice).status == 404)
            #expect(try await client.send(port: port, path: "/db/doc", user: Self.alice).jsonValue()["v"] == 1)
            #expect(try await client.send(port: ports.adminPort, path: "/db/").jsonValue()["update_seq"] == 1)
        }
    }

    @Test("gzip request bodies are accepted; corrupt gzip and unknown encodings are not")
    func contentEncoding() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            var plain = ByteBuffer(bytes: JSONValue.object(["v": 7]).serialized())
            var compressed = try plain.compress(with: .gzip())
            let gzipped = try await client.send(
                "PUT", port: ports.publicPort, path: "/db/zipped",
                headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
                body: compressed.readBytes(length: compressed.readableBytes), user: Self.alice)
            #expect(gzipped.status == 201)
            #expect(try await client.send(port: ports.adminPort, path: "/db/zipped").jsonValue()["v"] == 7)

            let corrupt = try await client.send(
                "PUT", port: ports.publicPort, path: "/db/corrupt",
                headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: Array("nope".utf8),
                user: Self.alice)
            #expect(corrupt.status == 400)
            let brotli = try await client.send(
                "PUT", port: ports.publicPort, path: "/db/brotli",
                headers: ["Content-Type": "application/json", "Content-Encoding": "br"], body: Array("{}".utf8),
                user: Self.alice)
            #expect(brotli.status == 415)
        }
    }

    @Test("Reserved and invalid document IDs are refused")
    func invalidIDs() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            let reserved = try await client.send("PUT", port: port, path: "/db/_secret", json: ["v": 1], user: Self.alice)
            #expect(reserved.status == 404)
            #expect(try reserved.jsonValue()["reason"] == "unknown URL")
            let encoded = try await client.send("PUT", port: port, path: "/db/%5Fsecret", json: ["v": 1], user: Self.alice)
            #expect(encoded.status == 404)
            let long = String(repeating: "x", count: 251)
            let tooLong = try await client.send("PUT", port: port, path: "/db/\(long)", json: ["v": 1], user: Self.alice)
            #expect(tooLong.status == 400)
            #expect(try tooLong.jsonValue()["reason"] == "Invalid doc ID")
            let posted = try await client.send("POST", port: port, path: "/db/", json: ["_id": "_design/x"], user: Self.alice)
            #expect(posted.status == 400)
            let slash = try await client.send("PUT", port: port, path: "/db/a%2Fb", json: ["v": 1], user: Self.alice)
            #expect(slash.status == 201)
            #expect(try slash.jsonValue()["id"] == "a/b")
        }
    }

    @Test("Non-string _rev and _id, bad attachment names and non-sequence since values are 400s; nothing changes")
    func validationAsSyncGatewayDoes() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            let numericRev = try await client.send("PUT", port: port, path: "/db/a", json: ["_rev": 1, "v": 1])
            #expect(numericRev.status == 400)
            for name in ["", "a\u{0}b", "line\nbreak"] {
                let reply = try await client.send(
                    "PUT", port: port, path: "/db/b",
                    json: ["_attachments": .object([name: ["content_type": "text/plain", "data": "aGk="]])])
                #expect(reply.status == 400, "attachment name \(name.debugDescription)")
            }
            let bulk = try await client.send(
                "POST", port: port, path: "/db/_bulk_docs", json: ["docs": [["_id": 5, "v": 1], ["v": 2], ["_id": "c"]]])
            #expect(bulk.status == 201)
            let results = try #require(try bulk.jsonValue().arrayValue)
            #expect(results.count == 3 && results.allSatisfy { $0["id"]?.stringValue != nil }, "\(bulk.text)")
            #expect(results[1]["rev"] != nil && results[2]["rev"] != nil)
            #expect(results.first?["id"] == "5" && results.first?["status"] == 400)
            // (`L:T:S` such as `1:2:3` is Sync Gateway's low-sequence form, and is accepted.)
            for since in ["abc", "-4", "1:x", "1:2:3:4", "9223372036854775808", "9223372036854775808:1", "1:18446744073709551616"] {
                let reply = try await client.send(port: port, path: "/db/_changes?since=\(since)")
                #expect(reply.status == 400, "since=\(since)")
            }
            // Unknown values of enumerated query parameters are 400s; the known ones are accepted.
            for (method, path) in [
                ("POST", "/db/_compact?type=AAA"), ("GET", "/db/_changes?version_type=AAA"),
                ("GET", "/db/_changes?style=AAA"),
            ] {
                let reply = try await client.send(method, port: port, path: path)
                #expect(reply.status == 400, "\(path): \(reply.text)")
            }
            for (method, path) in [
                ("POST", "/db/_compact?type=tombstone"), ("GET", "/db/_changes?version_type=rev&style=main_only"),
            ] {
                #expect(try await client.send(method, port: port, path: path).status == 200, "\(path)")
            }
            // Nothing was stored by the refused writes: only the two good documents of the bulk request.
            let all = try await client.send(port: port, path: "/db/_all_docs")
            #expect(try all.jsonValue()["total_rows"] == 2, "\(all.text)")
        }
    }

    @Test("A document at the last revision generation cannot be edited further: 400, and it stays readable")
    func lastGeneration() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.adminPort
            let last = "\(RevisionID.maximumGeneration)-a"
            let stored = try await client.send(
                "PUT", port: port, path: "/db/gen?new_edits=false",
                json: ["_rev": .string(last), "_revisions": ["start": .int(Int64(RevisionID.maximumGeneration)), "ids": ["a"]]])
            #expect(stored.status == 201, "\(stored.text)")
            let child = try await client.send("PUT", port: port, path: "/db/gen", json: ["_rev": .string(last), "v": 2])
            #expect(child.status == 400, "\(child.text)")
            let read = try await client.send(port: port, path: "/db/gen")
            let readRevision = try read.jsonValue()["_rev"]?.stringValue
            #expect(read.status == 200 && readRevision == last)
            #expect(try await client.send(port: port, path: "/db/_changes").status == 200)
        }
    }

    @Test("Malformed revision IDs and _revisions are 400s")
    func malformedRevisions() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let port = ports.publicPort
            _ = try await client.send("PUT", port: port, path: "/db/doc", json: ["v": 1], user: Self.alice)
            for rev in ["garbage", "0-abc", "x-abc", "1-"] {
                let read = try await client.send(port: port, path: "/db/doc?rev=\(rev)", user: Self.alice)
                #expect(read.status == 400, "rev=\(rev)")
                let write = try await client.send(
                    "PUT", port: port, path: "/db/doc?rev=\(rev)", json: ["v": 2], user: Self.alice)
                #expect(write.status == 400, "rev=\(rev)")
            }
            let noHistory = try await client.send(
                "PUT", port: port, path: "/db/other?new_edits=false", json: ["v": 1], user: Self.alice)
            #expect(noHistory.status == 400)
            let gap = try await client.send(
                "PUT", port: port, path: "/db/other?new_edits=false",
                json: ["_rev": "3-c", "_revisions": ["start": 3, "ids": ["c", 5]]], user: Self.alice)
            #expect(gap.status == 400)
            #expect(try gap.jsonValue()["reason"] == "Bad _revisions")
            // A `_rev` that disagrees with `_revisions` is ignored, as CouchDB ignores it: `_revisions` names the
            // revision stored (PouchDB replicates such documents).
            let mismatch = try await client.send(
                "PUT", port: port, path: "/db/other?new_edits=false",
                json: ["_rev": "3-c", "_revisions": ["start": 2, "ids": ["c", "b"]]], user: Self.alice)
            #expect(mismatch.status == 201)
            #expect(try mismatch.jsonValue()["rev"] == "2-c")
            let badOpenRevs = try await client.send(port: port, path: "/db/doc?open_revs=%5B1", user: Self.alice)
            #expect(badOpenRevs.status == 400)
            #expect(try badOpenRevs.jsonValue()["reason"] == "bad open_revs")
        }
    }

    @Test("Unknown databases are 404s; wrong or missing credentials are 401s with WWW-Authenticate")
    func unknownDatabaseAndAuth() async throws {
        try await GatewayFixture.withRunningGateway(Self.config) { client, ports in
            let unknown = try await client.send(port: ports.publicPort, path: "/nope/doc", user: Self.alice)
            #expect(unknown.status == 404)
            #expect(try unknown.jsonValue()["reason"] == "no such database \"nope\"")

            let wrong = try await client.send(port: ports.publicPort, path: "/db/doc", user: ("alice", "wrong"))
            #expect(wrong.status == 401)
            #expect(wrong.header("WWW-Authenticate") == #"Basic realm="Couchbase Sync Gateway""#)
            #expect(try wrong.jsonValue()["reason"] == "Invalid login")

            let stranger = try await client.send(port: ports.publicPort, path: "/db/doc", user: ("mallory", "pass"))
            #expect(stranger.status == 401)

            let anonymous = try await client.send(port: ports.publicPort, path: "/db/doc")
            #expect(anonymous.status == 401)
            #expect(try anonymous.jsonValue()["reason"] == "Login required")
            #expect(anonymous.header("WWW-Authenticate") != nil)

            let garbled = try await client.send(
                port: ports.publicPort, path: "/db/doc", headers: ["Authorization": "Basic !!!"])
            #expect(garbled.status == 401)
        }
    }
}
