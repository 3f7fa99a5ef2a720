import CouchetteBLIP
import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

/// Delta sync over BLIP (blip-sync-protocol.md §4): `delta_sync.enabled`, `deltas: true` and `deltaSrc` both ways.
@Suite(.timeLimit(.minutes(2))) struct BLIPDeltaTests {
    static func config(deltaSync: Bool) -> GatewayConfig {
        var config = ChangesTests.usersConfig()
        config.databases["todo"]?.deltaSync = deltaSync
        return config
    }

    static let longText = String(repeating: "a long description that does not change. ", count: 40)

    /// Pulls `doc` as a client that knows `known` and announces deltas; returns the `rev` it got.
    static func pull(port: Int, known: String) async throws -> BLIPMessage {
        let (revisions, continuation) = AsyncStream.makeStream(of: BLIPMessage.self)
        let handler: BLIPConnection.RequestHandler = { request, _ in
            if request.profile == "rev" { continuation.yield(request) }
            guard request.profile == "changes" else { return request.reply() }
            let count = (try? JSONValue(parsing: request.body).arrayValue?.count) ?? 0
            let wanted = JSONValue.array(Array(repeating: .array([.string(known)]), count: count))
            return request.reply(properties: ["maxHistory": "20", "deltas": "true"], body: wanted.serialized())
        }
        let received = First()
        try await BLIPTestClient.run(port: port, user: ("alice", "pass"), handler: handler) { connection in
            _ = try await connection.send(properties: ["Profile": "subChanges"])
            var iterator = revisions.makeAsyncIterator()
            await received.set(await iterator.next())
        }
        return try #require(await received.value)
    }

    /// The first `rev` a pull got.
    actor First {
        var value: BLIPMessage?
        func set(_ message: BLIPMessage?) { value = message }
    }

    @Test("With delta sync on, a pulled revision comes as a delta against the revision the client knows")
    func pullDelta() async throws {
        try await StreamingGateway.run(Self.config(deltaSync: true)) { _, client, ports in
            let old: JSONValue = ["channels": ["a"], "text": .string(Self.longText), "done": false]
            let first = try await ChangesTests.put(client, port: ports.adminPort, "task", old)
            var new = old
            new["done"] = true
            let second = try await ChangesTests.put(client, port: ports.adminPort, "task", new, rev: first)
            let revision = try await Self.pull(port: ports.publicPort, known: first)
            #expect(revision.properties["rev"] == second)
            #expect(revision.properties["deltaSrc"] == first)
            #expect(revision.body.count < 40)
            #expect(try JSONDelta.apply(try JSONValue(parsing: revision.body), to: old) == new)
        }
    }

    @Test("With delta sync off, the whole body is sent")
    func noDeltaWhenOff() async throws {
        try await StreamingGateway.run(Self.config(deltaSync: false)) { _, client, ports in
            let first = try await ChangesTests.put(client, port: ports.adminPort, "task", ["channels": ["a"], "text": .string(Self.longText)])
            try await ChangesTests.put(client, port: ports.adminPort, "task", ["channels": ["a"], "text": .string(Self.longText), "done": true], rev: first)
            let revision = try await Self.pull(port: ports.publicPort, known: first)
            #expect(revision.properties["deltaSrc"] == nil)
            #expect(try JSONValue(parsing: revision.body)["done"] == true)
        }
    }

    @Test("A pushed delta is applied to its source revision; deltas are refused when delta sync is off")
    func pushDelta() async throws {
        for enabled in [true, false] {
            try await StreamingGateway.run(Self.config(deltaSync: enabled)) { _, client, ports in
                let first = try await ChangesTests.put(client, port: ports.adminPort, "task", ["channels": ["a"], "n": 1])
                try await BLIPTestClient.run(port: ports.publicPort, user: ("alice", "pass")) { connection in
                    let proposal: JSONValue = [["task", "2-0b", .string(first)]]
                    let proposed = try await connection.send(properties: ["Profile": "proposeChanges"], body: proposal.serialized())
                    #expect(proposed.properties["deltas"] == (enabled ? "true" : nil))
                    let stored = try await connection.send(
                        properties: ["Profile": "rev", "id": "task", "rev": "2-0b", "history": first, "deltaSrc": first],
                        body: Array(#"{"n":2,"added":"yes"}"#.utf8))
                    #expect(stored.error?.code == (enabled ? nil : 400))
                }
                if enabled {
                    let body = try await client.send(port: ports.adminPort, path: "/todo/task").jsonValue()
                    #expect(body["n"] == 2)
                    #expect(body["added"] == "yes")
                    #expect(body["channels"] == ["a"])
                }
            }
        }
    }
}
