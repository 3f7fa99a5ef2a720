import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - Streaming

extension ChangesTests {
    /// Longpoll and continuous feeds over real sockets: waiting, heartbeats, and how feeds end
    /// (gateway-rest-api.md §11.3). Heartbeats prove a feed caught up and waits; the floor is lowered to 50 ms.
    @Suite("_changes longpoll and continuous", .timeLimit(.minutes(5)))
    struct Streaming {
        @Test("A longpoll waits, sending heartbeats, and returns when a write lands")
        func longpollReturnsOnWrite() async throws {
            try await StreamingGateway.run { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "old", [:])
                let feed = try await StreamingResponse.open(
                    client, port: ports.adminPort, path: "/todo/_changes?feed=longpoll&since=1&heartbeat=50")
                #expect(feed.status == 200)
                #expect(feed.headers.first(name: "Content-Type") == "application/json")
                #expect(feed.headers.first(name: "Cache-Control") == "private, max-age=0, no-cache, no-store")
                // A heartbeat after the opening means the feed found nothing and waits.
                #expect(try await feed.peek(until: "[\n").hasPrefix("{\"results\":[\n"))

                let rev = try await ChangesTests.put(client, port: ports.adminPort, "new", ["n": 1])
                let body = try await feed.readToEnd()
                let parsed = try ChangesTests.results(body)
                #expect(parsed.results.count == 1)
                #expect(parsed.results.first?["id"] == "new")
                #expect(parsed.results.first?["changes"] == [["rev": .string(rev)]])
                #expect(parsed.lastSeq == "2")
                #expect(body.hasSuffix("}],\n\"last_seq\":\"2\"}"))
            }
        }

        @Test("A longpoll with entries already there returns at once; one that times out returns empty results")
        func longpollImmediateAndTimeout() async throws {
            try await StreamingGateway.run { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "doc", [:])
                let immediate = try await client.send(port: ports.adminPort, path: "/todo/_changes?feed=longpoll")
                #expect(try ChangesTests.results(immediate.text).results.map { $0["id"] } == ["doc"])
                let timedOut = try await client.send(
                    port: ports.adminPort, path: "/todo/_changes?feed=longpoll&since=1&timeout=100")
                #expect(timedOut.text == "{\"results\":[],\n\"last_seq\":\"1\"}")
            }
        }

        @Test("A continuous feed sends one entry per line, heartbeats while idle, and new entries as they happen")
        func continuousWithHeartbeats() async throws {
            try await StreamingGateway.run { _, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "one", [:])
                try await ChangesTests.put(client, port: ports.adminPort, "two", [:])
                let feed = try await StreamingResponse.open(
                    client, port: ports.adminPort, path: "/todo/_changes?feed=continuous&heartbeat=50")
                #expect(feed.status == 200)
                #expect(feed.headers.first(name: "Content-Type") == "application/octet-stream")

                let backlog = try await feed.lines(until: \.isEmpty)
                #expect(try backlog.dropLast().map { try ChangesTests.json($0)["id"] } == ["one", "two"])
                #expect(try await feed.nextLine() == "")  // a second heartbeat: still idle

                try await ChangesTests.put(client, port: ports.adminPort, "three", [:])
                let next = try await feed.lines(until: { !$0.isEmpty })
                let entry = try ChangesTests.json(try #require(next.last))
                #expect(entry["id"] == "three")
                #expect(entry["seq"] == 3)
            }
        }

        @Test("A continuous feed ends when its limit is reached, or on timeout")
        func continuousEnds() async throws {
            try await StreamingGateway.run { _, client, ports in
                for id in ["a", "b", "c"] { try await ChangesTests.put(client, port: ports.adminPort, id, [:]) }
                let limited = try await client.send(
                    port: ports.adminPort, path: "/todo/_changes?feed=continuous&limit=2")
                let lines = limited.text.split(separator: "\n").map(String.init)
                #expect(try lines.map { try ChangesTests.json($0)["seq"] } == [1, 2])

                let timedOut = try await client.send(
                    port: ports.adminPort, path: "/todo/_changes?feed=continuous&since=3&timeout=100")
                #expect(timedOut.status == 200)
                #expect(timedOut.body.isEmpty)
            }
        }

        @Test("A user's continuous feed on the public port sends only their channels, removals included")
        func continuousForUser() async throws {
            try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
                let feed = try await StreamingResponse.open(
                    client, port: ports.publicPort, path: "/todo/_changes?feed=continuous&heartbeat=50",
                    user: ("alice", "pass"))
                #expect(feed.status == 200)
                _ = try await feed.lines(until: \.isEmpty)
                // Each write is awaited on the feed: a feed shows a document once, at its latest change.
                try await ChangesTests.put(client, port: ports.adminPort, "forB", ["channels": ["b"]])
                let rev = try await ChangesTests.put(client, port: ports.adminPort, "forA", ["channels": ["a"]])
                let added = try ChangesTests.json(try #require(try await feed.lines(until: { !$0.isEmpty }).last))
                #expect(added["id"] == "forA")
                #expect(added["seq"] == 2)
                #expect(added["removed"] == nil)
                try await ChangesTests.put(client, port: ports.adminPort, "forA", ["channels": ["b"]], rev: rev)
                let removed = try ChangesTests.json(try #require(try await feed.lines(until: { !$0.isEmpty }).last))
                #expect(removed["id"] == "forA")
                #expect(removed["seq"] == 3)
                #expect(removed["removed"] == ["a"])
            }
        }

        @Test("Taking the database offline ends open feeds; new requests get 503")
        func offlineEndsFeeds() async throws {
            try await StreamingGateway.run { server, client, ports in
                let continuous = try await StreamingResponse.open(
                    client, port: ports.adminPort, path: "/todo/_changes?feed=continuous&heartbeat=50")
                let longpoll = try await StreamingResponse.open(
                    client, port: ports.adminPort, path: "/todo/_changes?feed=longpoll&heartbeat=50")
                _ = try await continuous.lines(until: \.isEmpty)
                _ = try await longpoll.peek(until: "[\n")

                try await StreamingGateway.database(server).setState(.offline)
                #expect(try await continuous.readToEnd().allSatisfy { $0 == "\n" })
                let body = try await longpoll.readToEnd()
                #expect(try ChangesTests.results(body).results.isEmpty)
                let refused = try await client.send(port: ports.adminPort, path: "/todo/_changes")
                #expect(refused.status == 503)
            }
        }

        @Test("Graceful shutdown ends an open continuous feed that has no heartbeat and no timeout")
        func shutdownWithOpenFeed() async throws {
            try await StreamingGateway.run { server, client, ports in
                try await ChangesTests.put(client, port: ports.adminPort, "doc", [:])
                let feed = try await StreamingResponse.open(
                    client, port: ports.adminPort, path: "/todo/_changes?feed=continuous&timeout=0")
                #expect(try ChangesTests.json(try #require(try await feed.nextLine()))["id"] == "doc")

                await server.triggerGracefulShutdown()
                #expect(try await feed.readToEnd().isEmpty)
                // StreamingGateway then checks that `run` returns, within the deadline.
            }
        }
    }
}
