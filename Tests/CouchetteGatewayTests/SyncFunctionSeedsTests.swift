import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionSeedsTests

/// The seeds' sync function walkthroughs over HTTP, with their outputs: each stage deployed with
/// `PUT /todo/_config/sync` (the Admin UI's Deploy To Server), then the tutorial's curl calls.
@Suite("Sync function: the seeds' walkthroughs over HTTP", .timeLimit(.minutes(5)))
struct SyncFunctionSeedsTests {
    typealias Fixture = AdminGatewayFixture

    /// `todo` with user1 and user2 (password `pass`) and the role `moderator`.
    static var config: GatewayConfig {
        var config = Fixture.config()
        config.databases["todo"]?.users = [
            "user1": UserConfig(name: "user1", password: "pass"), "user2": UserConfig(name: "user2", password: "pass"),
        ]
        return config
    }
    static let user1 = ("user1", "pass")

    /// Deploys a sync function as the Admin UI does.
    static func deploy(_ source: String, _ client: HTTPTestClient, _ ports: BoundPorts) async throws {
        let reply = try await client.send(
            "PUT", port: ports.adminPort, path: "/todo/_config/sync", headers: ["Content-Type": "application/javascript"],
            body: Array(source.utf8))
        #expect(reply.status == 200, "deploy: \(reply.text)")
    }

    /// `curl -vX POST 'http://user1:pass@localhost:4984/todo/_bulk_docs' -d '{"docs": …}'`.
    static func bulkDocs(_ docs: JSONValue, _ client: HTTPTestClient, _ ports: BoundPorts) async throws -> [JSONValue] {
        let reply = try await client.send(
            "POST", port: ports.publicPort, path: "/todo/_bulk_docs", json: ["docs": docs], user: user1)
        #expect(reply.status == 201)
        return try #require(try reply.jsonValue().arrayValue)
    }

    // MARK: - Lesson "Adding Security" (001)

    @Test("type property missing (403), missing role (403), then allowed once user1 is a moderator")
    func addingSecurityLesson() async throws {
        try await Fixture.run(Self.config) { client, ports, _ in
            try await Self.deploy(SeedSyncFunctions.typeRequired, client, ports)
            let first = try await Self.bulkDocs(
                [["type": "task-list", "name": "Groceries"], ["names": "Today"]], client, ports)
            #expect(first[0]["rev"] == "1-e4ac377fc9bd3345ddf5892b509c4d79")
            #expect(first[0]["id"]?.stringValue?.count == 32)
            #expect(first[1] == ["error": "forbidden", "reason": "type property missing", "status": 403])

            try await Self.deploy(SeedSyncFunctions.writePermissions, client, ports)
            let lists: JSONValue = [
                ["name": "Today", "type": "task-list", "owner": "user1"],
                ["name": "Groceries", "type": "task-list", "owner": "user2"],
            ]
            let second = try await Self.bulkDocs(lists, client, ports)
            #expect(second[0]["rev"] == "1-477f7c4f36a31ce9e86a5f465b168b8a")
            #expect(second[1] == ["error": "forbidden", "reason": "missing role", "status": 403])

            // curl -vX PUT 'http://localhost:4985/todo/_user/user1' -d '{"admin_roles": ["moderator"]}' → 200 OK
            let promoted = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/user1", json: ["admin_roles": ["moderator"]])
            #expect(promoted.status == 200)
            let third = try await Self.bulkDocs(lists, client, ports)
            #expect(third.allSatisfy { $0["error"] == nil && $0["rev"] != nil })
        }
    }

    // MARK: - Lesson "Adding Security" with the full Todo function (002)

    /// The final function of the lesson, as `make run` serves it.
    static var todoFunction: String {
        get throws {
            let config = try GatewayConfig.load(contentsOf: Self.examplePath)
            return try #require(config.databases["todo"]?.sync)
        }
    }

    static var examplePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples/todo/sync-gateway-config.json").path
    }

    /// The lesson's first stage: type validation only (the full function with its task-list branch emptied).
    static var typeValidation: String {
        get throws {
            let full = try todoFunction
            let start = try #require(full.range(of: "    /* Write Access */"))
            let end = try #require(full.range(of: "  function getType()"))
            return String(full[..<start.lowerBound]) + "  }\n\n" + String(full[end.lowerBound...])
        }
    }

    @Test("type is not provided. (403), wrong user (403), routing and access() grants with the Todo function")
    func todoFunctionLesson() async throws {
        try await Fixture.run(Self.config) { client, ports, _ in
            try await Self.deploy(try Self.typeValidation, client, ports)
            let first = try await Self.bulkDocs(
                [["type": "task-list", "name": "Groceries"], ["names": "Today"]], client, ports)
            #expect(first[0]["rev"] == "1-e4ac377fc9bd3345ddf5892b509c4d79")
            #expect(first[1] == ["error": "forbidden", "reason": "type is not provided.", "status": 403])

            try await Self.deploy(try Self.todoFunction, client, ports)
            let second = try await Self.bulkDocs(
                [["_id": "user1.list", "type": "task-list", "owner": "user1", "name": "Today"],
                 ["type": "task-list", "owner": "user2", "name": "Groceries"]], client, ports)
            #expect(second[0]["id"] == "user1.list")
            #expect(second[1] == ["error": "forbidden", "reason": "wrong user", "status": 403])
            let prefix = try await Self.bulkDocs(
                [["_id": "list2", "type": "task-list", "owner": "user1", "name": "Today"]], client, ports)
            #expect(prefix[0]["reason"] == "task-list id must be prefixed by list owner")

            // Routing: the list is in its own channel and in moderators'.
            let raw = try await client.send(port: ports.adminPort, path: "/todo/_raw/user1.list").jsonValue()
            #expect(raw["_sync"]?["channels"]?.objectValue.map { Set($0.keys) } == ["task-list.user1.list", "moderators"])

            // access(owner, …): the grants show on GET /todo/_user/user1, and user1 can read the list.
            let user = try await client.send(port: ports.adminPort, path: "/todo/_user/user1").jsonValue()
            let channels = Set(user["all_channels"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            #expect(channels.isSuperset(of: ["task-list.user1.list", "task-list.user1.list.users", "!"]))
            let read = try await client.send(port: ports.publicPort, path: "/todo/user1.list", user: Self.user1)
            #expect(read.status == 200)
            let other = try await client.send(port: ports.publicPort, path: "/todo/user1.list", user: ("user2", "pass"))
            #expect(other.status == 403)

            // An update may not change the type; a deletion by the owner passes (owner taken from oldDoc).
            let rev = try #require(try read.jsonValue()["_rev"]?.stringValue)
            let retype = try await client.send(
                "PUT", port: ports.publicPort, path: "/todo/user1.list?rev=\(rev)",
                json: ["type": "task", "owner": "user1", "name": "Today"], user: Self.user1)
            #expect(retype.status == 403)
            #expect(try retype.jsonValue()["reason"] == "type is read-only.")
            let deleted = try await client.send(
                "DELETE", port: ports.publicPort, path: "/todo/user1.list?rev=\(rev)", user: Self.user1)
            #expect(deleted.status == 200)
        }
    }

    // MARK: - Deploy

    @Test("A sync function with a syntax error is refused with its line; the previous one stays active")
    func deploySyntaxError() async throws {
        try await Fixture.run(Self.config) { client, ports, _ in
            try await Self.deploy(SeedSyncFunctions.typeRequired, client, ports)
            let broken = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_config/sync",
                body: Array("function(doc, oldDoc) {\n  channel(doc.channels);\n  if (\n}".utf8))
            #expect(broken.status == 400)
            #expect(try broken.jsonValue()["reason"]?.stringValue?.contains("line") == true)
            let results = try await Self.bulkDocs([["names": "x"]], client, ports)
            #expect(results[0]["reason"] == "type property missing")
        }
    }

    @Test("A runaway sync function fails one write with 500; the next write succeeds")
    func runawayFunction() async throws {
        try await Fixture.run(Self.config) { client, ports, _ in
            try await Self.deploy(
                "function(doc){ if (doc.loop) { while (true) {} } channel(doc.channels); }", client, ports)
            let runaway = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/spin", json: ["loop": true])
            #expect(runaway.status == 500)
            let next = try await client.send("PUT", port: ports.adminPort, path: "/todo/calm", json: ["channels": ["a"]])
            #expect(next.status == 201)
        }
    }

    // MARK: - Preview and resync

    @Test("_sync_preview runs a function over given and stored documents without persisting; _resync re-routes")
    func previewAndResync() async throws {
        try await Fixture.run(Self.config) { client, ports, _ in
            let admin = ports.adminPort
            _ = try await client.send("PUT", port: admin, path: "/todo/doc1", json: ["channels": ["a"], "owner": "user1"])
            let preview = try await client.send(
                "POST", port: admin, path: "/todo/_sync_preview",
                json: [
                    "sync": "function(doc){ channel(doc.owner); access(doc.owner, 'x'); if (doc.bad) throw({forbidden: 'no'}); }",
                    "docs": [["_id": "p1", "owner": "user2"], ["_id": "p2", "owner": "user2", "bad": true]],
                    "doc_ids": ["doc1"],
                ])
            #expect(preview.status == 200)
            let results = try #require(try preview.jsonValue()["results"]?.arrayValue)
            #expect(results[0] == ["id": "p1", "channels": ["user2"], "access": ["user2": ["x"]], "roles": [:]])
            #expect(results[1] == ["id": "p2", "error": "forbidden", "reason": "no", "status": 403])
            #expect(results[2]["channels"] == ["user1"])
            #expect(try await client.send(port: admin, path: "/todo/p1").status == 404)

            let badPreview = try await client.send(
                "POST", port: admin, path: "/todo/_sync_preview", json: ["sync": "function(doc) {", "docs": []])
            #expect(badPreview.status == 400)

            // Deploy a new function, then _resync (offline only) moves doc1 to its owner's channel.
            try await Self.deploy("function(doc){ channel(doc.owner); }", client, ports)
            let online = try await client.send("POST", port: admin, path: "/todo/_resync")
            #expect(online.status == 503)
            _ = try await client.send("POST", port: admin, path: "/todo/_offline")
            let resync = try await client.send("POST", port: admin, path: "/todo/_resync")
            #expect(try resync.jsonValue() == ["changes": 1])
            _ = try await client.send("POST", port: admin, path: "/todo/_online")
            let raw = try await client.send(port: admin, path: "/todo/_raw/doc1").jsonValue()
            #expect(raw["_sync"]?["channels"]?["user1"] == .null)
            #expect(raw["_sync"]?["channels"]?["a"]?.objectValue != nil)
        }
    }
}
