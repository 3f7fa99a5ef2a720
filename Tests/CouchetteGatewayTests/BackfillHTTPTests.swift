import CouchetteCore
import Foundation
import HummingbirdWSClient
import Testing

@testable import CouchetteGateway

// MARK: - HTTP examples

extension BackfillTests {
    /// Late grants over real sockets (sync-function.md §8.2–§8.3): normal feeds resumed after a grant, and longpoll
    /// and continuous feeds open while the grant lands.
    @Suite("_changes backfill over HTTP", .timeLimit(.minutes(5)))
    struct HTTP {
        /// Runs a gateway whose `todo` database routes with ``BackfillTests/GrantRouter`` (role `moderator` reads
        /// `moderators`, GUEST disabled), with cheap bcrypt and a 50 ms heartbeat floor, all within `deadline`.
        static func run(
            deadline: Duration = .seconds(30),
            _ body: @escaping @Sendable (HTTPTestClient, BoundPorts, GatewayDatabase) async throws -> Void
        ) async throws {
            let config = AdminGatewayFixture.config()
            let registry = try DatabaseRegistry(config: config, hasher: PasswordHasher(cost: 4))
            let database = try #require(await registry.database(named: "todo"))
            BackfillTests.install(in: database)
            let server = try GatewayServer(config: config, registry: registry, logger: GatewayFixture.logger)
            try await StreamingGateway.run(server, deadline: deadline) { _, client, ports in
                try await body(client, ports, database)
            }
        }

        /// `PUT /todo/_user/{name}` on the admin port.
        static func putUser(_ client: HTTPTestClient, _ ports: BoundPorts, _ name: String, _ body: JSONValue)
            async throws
        {
            let reply = try await client.send("PUT", port: ports.adminPort, path: "/todo/_user/\(name)", json: body)
            try #require((200..<300).contains(reply.status), "PUT _user/\(name): \(reply.status) \(reply.text)")
        }

        /// `GET /todo/_changes?…` as `name` (password `pass`) on the public port: the results and `last_seq`.
        static func changes(_ client: HTTPTestClient, _ ports: BoundPorts, as name: String, query: String)
            async throws -> (results: [JSONValue], lastSeq: String?, text: String)
        {
            let reply = try await client.send(
                port: ports.publicPort, path: "/todo/_changes?\(query)", user: (name, "pass"))
            try #require(reply.status == 200, "_changes: \(reply.status) \(reply.text)")
            let parsed = try ChangesTests.results(reply.text)
            return (parsed.results, parsed.lastSeq, reply.text)
        }

        @Test("since=N after an admin grant: the channel's older documents as \"N:S\", newer ones, the _user/ entry")
        func adminGrant() async throws {
            try await Self.run { client, ports, _ in
                try await Self.putUser(client, ports, "user2", ["password": "pass"])  // 1
                let first = try await ChangesTests.put(client, port: ports.adminPort, "t1", ["channels": ["tasks"]])
                try await ChangesTests.put(client, port: ports.adminPort, "p1", ["channels": ["!"]])  // 3
                let synced = try await Self.changes(client, ports, as: "user2", query: "since=0")
                #expect(synced.results.map { $0["id"] } == ["p1"])
                #expect(synced.lastSeq == "3")

                let second = try await ChangesTests.put(client, port: ports.adminPort, "t2", ["channels": ["tasks"]])
                try await Self.putUser(client, ports, "user2", ["admin_channels": ["tasks"]])  // 5
                let resumed = try await Self.changes(client, ports, as: "user2", query: "since=3")
                let expected =
                    #"{"results":[{"changes":[{"rev":"\#(first)"}],"id":"t1","seq":"3:2"},"# + "\n"
                    + #"{"changes":[{"rev":"\#(second)"}],"id":"t2","seq":4},"# + "\n"
                    + #"{"changes":[],"id":"_user/user2","seq":5}],"# + "\n" + #""last_seq":"5"}"#
                #expect(resumed.text == expected)
                let caughtUp = try await Self.changes(client, ports, as: "user2", query: "since=5")
                #expect(caughtUp.results.isEmpty && caughtUp.lastSeq == "5")
            }
        }

        @Test("A role granted after N backfills the role's channels; limit pauses the backfill at \"N:S\"")
        func roleGrantWithLimit() async throws {
            try await Self.run { client, ports, _ in
                try await Self.putUser(client, ports, "user3", ["password": "pass"])  // 1
                for id in ["m1", "m2", "m3"] {
                    try await ChangesTests.put(client, port: ports.adminPort, id, ["channels": ["moderators"]])
                }  // 2, 3, 4
                try await Self.putUser(client, ports, "user3", ["admin_roles": ["moderator"]])  // 5
                let first = try await Self.changes(client, ports, as: "user3", query: "since=4&limit=2")
                #expect(first.results.map { $0["seq"] } == ["4:2", "4:3"])
                #expect(first.lastSeq == "4:3")
                let rest = try await Self.changes(client, ports, as: "user3", query: "since=4:3")
                #expect(rest.results.map { $0["seq"] } == ["4:4", 5])
                #expect(rest.results.map { $0["id"] } == ["m3", "_user/user3"])
                #expect(rest.lastSeq == "5")
                let done = try await Self.changes(client, ports, as: "user3", query: "since=5")
                #expect(done.results.isEmpty)
            }
        }

        @Test("A longpoll open before the grant returns the backfill when the grant lands")
        func longpollSeesGrant() async throws {
            try await Self.run { client, ports, _ in
                try await Self.putUser(client, ports, "user2", ["password": "pass"])  // 1
                let rev = try await ChangesTests.put(client, port: ports.adminPort, "t1", ["channels": ["tasks"]])
                let feed = try await StreamingResponse.open(
                    client, port: ports.publicPort, path: "/todo/_changes?feed=longpoll&since=0&heartbeat=50",
                    user: ("user2", "pass"))
                #expect(feed.status == 200)
                // A heartbeat after the opening means the feed found nothing and waits.
                _ = try await feed.peek(until: "[\n")

                try await Self.putUser(client, ports, "user2", ["admin_channels": ["tasks"]])  // 3
                let parsed = try ChangesTests.results(try await feed.readToEnd())
                #expect(parsed.results.map { $0["id"] } == ["t1", "_user/user2"])
                #expect(parsed.results.map { $0["seq"] } == ["2:2", 3])
                #expect(parsed.results.first?["changes"] == [["rev": .string(rev)]])
                #expect(parsed.lastSeq == "3")

                try await ChangesTests.put(client, port: ports.adminPort, "t2", ["channels": ["tasks"]])  // 4
                let next = try await Self.changes(client, ports, as: "user2", query: "since=3")
                #expect(next.results.map { $0["id"] } == ["t2"])
                #expect(next.results.map { $0["seq"] } == [4])
            }
        }

        @Test("A continuous feed open before a document's access() grant backfills, then streams the channel")
        func continuousSeesDocumentGrant() async throws {
            try await Self.run { client, ports, _ in
                try await Self.putUser(client, ports, "alice", ["password": "pass", "admin_channels": ["a"]])  // 1
                try await ChangesTests.put(client, port: ports.adminPort, "b1", ["channels": ["b"]])  // 2
                try await ChangesTests.put(client, port: ports.adminPort, "a1", ["channels": ["a"]])  // 3
                let feed = try await StreamingResponse.open(
                    client, port: ports.publicPort, path: "/todo/_changes?feed=continuous&heartbeat=50",
                    user: ("alice", "pass"))
                let backlog = try await feed.lines(until: \.isEmpty)
                #expect(try backlog.dropLast().map { try ChangesTests.json($0)["id"] } == ["a1"])

                try await ChangesTests.put(client, port: ports.adminPort, "grant", ["grant": ["alice": ["b"]]])  // 4
                let backfill = try ChangesTests.json(try #require(try await feed.lines(until: { !$0.isEmpty }).last))
                #expect(backfill["id"] == "b1")
                #expect(backfill["seq"] == "3:2")
                let userEntry = try ChangesTests.json(try #require(try await feed.lines(until: { !$0.isEmpty }).last))
                #expect(userEntry == ["seq": 4, "id": "_user/alice", "changes": []])

                try await ChangesTests.put(client, port: ports.adminPort, "b2", ["channels": ["b"]])  // 5
                let later = try ChangesTests.json(try #require(try await feed.lines(until: { !$0.isEmpty }).last))
                #expect(later["id"] == "b2")
                #expect(later["seq"] == 5)
            }
        }

        @Test("A WebSocket feed open before a role grant sends the backfill, then the _user/ entry")
        func webSocketSeesRoleGrant() async throws {
            try await Self.run { client, ports, _ in
                try await Self.putUser(client, ports, "user3", ["password": "pass"])  // 1
                try await ChangesTests.put(client, port: ports.adminPort, "m1", ["channels": ["moderators"]])  // 2
                try await StreamingWebSocket.run(
                    port: ports.publicPort, options: ["since": 0, "heartbeat": 50], user: ("user3", "pass")
                ) { messages, _ in
                    #expect(StreamingWebSocket.text(try await messages.next()) == "[]")
                    try await Self.putUser(client, ports, "user3", ["admin_roles": ["moderator"]])  // 3
                    var entries: [JSONValue] = []
                    while entries.count < 2 {
                        let message = try await messages.next()
                        if StreamingWebSocket.text(message) == "" { continue }  // a heartbeat
                        entries += try StreamingWebSocket.entries(message)
                    }
                    #expect(entries.map { $0["id"] } == ["m1", "_user/user3"])
                    #expect(entries.map { $0["seq"] } == ["2:2", 3])
                }
            }
        }
    }
}
