import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - HTTP

extension ChangesTests {
    /// Normal feeds over real sockets: framing, parameters, filters, errors and channel visibility
    /// (gateway-rest-api.md §11).
    @Suite("_changes over HTTP", .timeLimit(.minutes(5)))
    struct HTTP {
        @Test("since=3 on the admin port after five writes: the deletion at seq 4 and the write at 5, framed exactly")
        func sinceThree() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                let port = ports.adminPort
                let first = try await ChangesTests.put(client, port: port, "doc1", ["title": "one"])
                try await ChangesTests.put(client, port: port, "doc2", ["title": "two"])
                try await ChangesTests.put(client, port: port, "doc3", ["title": "three"])
                let tombstone = try await ChangesTests.delete(client, port: port, "doc1", rev: first)
                let last = try await ChangesTests.put(client, port: port, "doc5", ["title": "five"])

                let reply = try await client.send(port: port, path: "/todo/_changes?since=3")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type") == "application/json")
                #expect(reply.header("Cache-Control") == "private, max-age=0, no-cache, no-store")
                let expected =
                    #"{"results":[{"changes":[{"rev":"\#(tombstone)"}],"deleted":true,"id":"doc1","seq":4},"#
                    + "\n" + #"{"changes":[{"rev":"\#(last)"}],"id":"doc5","seq":5}],"# + "\n" + #""last_seq":"5"}"#
                #expect(reply.text == expected)

                let empty = try await client.send(port: port, path: "/todo/_changes?since=5")
                #expect(empty.text == "{\"results\":[],\n\"last_seq\":\"5\"}")

                let all = try ChangesTests.results(try await client.send(port: port, path: "/todo/_changes").text)
                #expect(all.results.map { $0["seq"] } == [2, 3, 4, 5])
                #expect(all.lastSeq == "5")
            }
        }

        @Test("Compound since values resume the normal feed after N of N:S (no backfill for the admin); limit caps")
        func compoundSinceAndLimit() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                for id in ["a", "b", "c", "d"] { try await ChangesTests.put(client, port: ports.adminPort, id, [:]) }
                for since in ["2", "2:1", "1::2", "1:2:1"] {
                    let reply = try await client.send(port: ports.adminPort, path: "/todo/_changes?since=\(since)")
                    #expect(try ChangesTests.results(reply.text).results.map { $0["seq"] } == [3, 4])
                }
                let limited = try await client.send(port: ports.adminPort, path: "/todo/_changes?limit=2")
                let parsed = try ChangesTests.results(limited.text)
                #expect(parsed.results.map { $0["seq"] } == [1, 2])
                #expect(parsed.lastSeq == "2")
            }
        }

        @Test("POST takes the parameters from the body; the query overrides them")
        func post() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                for id in ["a", "b", "c", "d"] {
                    try await ChangesTests.put(client, port: ports.adminPort, id, ["channels": ["x"]])
                }
                let body: JSONValue = ["since": 1, "limit": 1, "filter": "sync_gateway/bychannel", "channels": ["x"]]
                let reply = try await client.send("POST", port: ports.adminPort, path: "/todo/_changes", json: body)
                #expect(reply.status == 200)
                #expect(try ChangesTests.results(reply.text).results.map { $0["seq"] } == [2])
                let overridden = try await client.send(
                    "POST", port: ports.adminPort, path: "/todo/_changes?limit=2", json: body)
                #expect(try ChangesTests.results(overridden.text).results.map { $0["seq"] } == [2, 3])
                let empty = try await client.send("POST", port: ports.adminPort, path: "/todo/_changes?since=3")
                #expect(try ChangesTests.results(empty.text).results.map { $0["seq"] } == [4])
                let notObject = try await client.send("POST", port: ports.adminPort, path: "/todo/_changes", json: [1])
                #expect(notObject.status == 400)
            }
        }

        @Test("HEAD answers 200 with the headers and no body")
        func head() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                let reply = try await client.send("HEAD", port: ports.adminPort, path: "/todo/_changes?feed=longpoll")
                #expect(reply.status == 200)
                #expect(reply.body.isEmpty)
            }
        }

        @Test("Bad parameters are 400 with Sync Gateway's reasons")
        func badRequests() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                let cases: [(String, String)] = [
                    ("feed=eventsource", "Unknown feed type"),
                    ("since=abc", "Invalid sequence"),
                    ("filter=sync_gateway/bychannel", "Missing 'channels' filter parameter"),
                    ("filter=sync_gateway/bychannel&channels=", "Empty channel list"),
                    ("filter=app/mine", "Unknown filter; try sync_gateway/bychannel or _doc_ids"),
                    ("filter=_doc_ids", "Missing 'doc_ids' filter parameter"),
                    ("descending=true&feed=longpoll", "descending=true needs feed=normal"),
                    ("seq_interval=-1", "Invalid seq_interval"),
                    ("feed=websocket", "feed=websocket needs a WebSocket upgrade request"),
                ]
                for (query, reason) in cases {
                    let reply = try await client.send(port: ports.adminPort, path: "/todo/_changes?\(query)")
                    #expect(reply.status == 400, "\(query)")
                    #expect(try reply.jsonValue()["reason"]?.stringValue == reason, "\(query)")
                }
                let missing = try await client.send(port: ports.adminPort, path: "/nope/_changes")
                #expect(missing.status == 404)
            }
        }

        @Test("bychannel and _doc_ids filters select their documents")
        func filters() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                let port = ports.adminPort
                try await ChangesTests.put(client, port: port, "inA", ["channels": ["a"]])
                try await ChangesTests.put(client, port: port, "inB", ["channels": ["b"]])
                try await ChangesTests.put(client, port: port, "inAB", ["channels": ["a", "b"]])
                try await ChangesTests.put(client, port: port, "none", [:])

                let byA = try await client.send(
                    port: port, path: "/todo/_changes?filter=sync_gateway/bychannel&channels=a")
                #expect(try ChangesTests.results(byA.text).results.map { $0["id"] } == ["inA", "inAB"])
                let byB = try await client.send(
                    port: port, path: "/todo/_changes?filter=sync_gateway/bychannel&channels=b,zz")
                #expect(try ChangesTests.results(byB.text).results.map { $0["id"] } == ["inB", "inAB"])

                let ids = #"["none","inA","missing"]"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let byIDs = try await client.send(port: port, path: "/todo/_changes?filter=_doc_ids&doc_ids=\(ids)")
                #expect(try ChangesTests.results(byIDs.text).results.map { $0["id"] } == ["inA", "none"])
                let byList = try await client.send(port: port, path: "/todo/_changes?filter=_doc_ids&doc_ids=inB,inAB")
                #expect(try ChangesTests.results(byList.text).results.map { $0["id"] } == ["inB", "inAB"])
            }
        }

        @Test("style=all_docs, include_docs and active_only over HTTP")
        func entryOptions() async throws {
            try await GatewayFixture.withRunningGateway { client, ports in
                let port = ports.adminPort
                let rev = try await ChangesTests.put(client, port: port, "doc", ["n": 1])
                let gone = try await ChangesTests.put(client, port: port, "gone", [:])
                try await ChangesTests.delete(client, port: port, "gone", rev: gone)
                let reply = try await client.send(
                    port: port, path: "/todo/_changes?include_docs=true&style=all_docs&active_only=true")
                let results = try ChangesTests.results(reply.text).results
                #expect(results.count == 1)
                #expect(results.first?["doc"] == ["_id": "doc", "_rev": .string(rev), "n": 1])
                #expect(results.first?["changes"] == [["rev": .string(rev)]])
            }
        }

        @Test("On the public port a user sees only their channels; a document leaving them appears with removed")
        func userChannels() async throws {
            try await GatewayFixture.withRunningGateway(ChangesTests.usersConfig()) { client, ports in
                let admin = ports.adminPort
                let moving = try await ChangesTests.put(client, port: admin, "moving", ["channels": ["a"]])
                try await ChangesTests.put(client, port: admin, "forB", ["channels": ["b"]])
                try await ChangesTests.put(client, port: admin, "forA", ["channels": ["a"]])
                let moved = try await ChangesTests.put(client, port: admin, "moving", ["channels": ["b"]], rev: moving)

                let path = "/todo/_changes"
                let alice = try await client.send(port: ports.publicPort, path: path, user: ("alice", "pass"))
                #expect(alice.status == 200)
                let aliceResults = try ChangesTests.results(alice.text)
                #expect(aliceResults.results.map { $0["id"] } == ["forA", "moving"])
                #expect(aliceResults.results.last?["removed"] == ["a"])
                #expect(aliceResults.results.last?["changes"] == [["rev": .string(moved)]])
                #expect(aliceResults.lastSeq == "4")

                let bob = try await client.send(port: ports.publicPort, path: path, user: ("bob", "pass"))
                let bobResults = try ChangesTests.results(bob.text).results
                #expect(bobResults.map { $0["id"] } == ["forB", "moving"])
                #expect(bobResults.allSatisfy { $0["removed"] == nil })

                let aliceByB = try await client.send(
                    port: ports.publicPort, path: "\(path)?filter=sync_gateway/bychannel&channels=b",
                    user: ("alice", "pass"))
                #expect(try ChangesTests.results(aliceByB.text).results.isEmpty)

                let activeOnly = try await client.send(
                    port: ports.publicPort, path: "\(path)?active_only=true", user: ("alice", "pass"))
                #expect(try ChangesTests.results(activeOnly.text).results.map { $0["id"] } == ["forA"])

                let anonymous = try await client.send(port: ports.publicPort, path: path)
                #expect(anonymous.status == 401)
            }
        }
    }
}
