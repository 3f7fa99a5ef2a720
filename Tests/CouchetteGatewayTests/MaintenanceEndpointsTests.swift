import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - MaintenanceEndpointsTests

/// Database maintenance and configuration over the admin port (gateway-rest-api.md §4, §15, §16).
@Suite("Maintenance endpoints over HTTP", .timeLimit(.minutes(5)))
struct MaintenanceEndpointsTests {
    typealias Fixture = AdminGatewayFixture

    // MARK: - Online and offline

    @Test("_offline makes document endpoints 503 while info, _config and _online still work; _online restores")
    func offlineAndOnline() async throws {
        try await Fixture.run(Fixture.config(guest: true)) { client, ports, registry in
            let admin = ports.adminPort
            #expect(try await client.send("PUT", port: admin, path: "/todo/doc1", json: ["a": 1]).status == 201)
            let database = try await registry.requireDatabase(named: "todo")

            #expect(try await client.send("POST", port: admin, path: "/todo/_offline").status == 200)
            #expect(database.changeNotifier.isClosed)
            for port in [ports.publicPort, admin] {
                let read = try await client.send(port: port, path: "/todo/doc1")
                #expect(read.status == 503)
                #expect(try read.jsonValue()["reason"] == "DB is currently under maintenance")
                let info = try await client.send(port: port, path: "/todo/")
                #expect(info.status == 200)
                #expect(try info.jsonValue()["state"] == "Offline")
            }
            #expect(try await client.send(port: admin, path: "/todo/_user/").status == 503)
            #expect(try await client.send("POST", port: admin, path: "/todo/_compact").status == 503)
            #expect(try await client.send(port: ports.publicPort, path: "/todo/_session").status == 503)
            #expect(try await client.send(port: admin, path: "/todo/_config").status == 200)
            #expect(try await client.send("POST", port: admin, path: "/todo/_offline").status == 200)

            #expect(try await client.send("POST", port: admin, path: "/todo/_online").status == 200)
            #expect(database.state == .online)
            #expect(!database.changeNotifier.isClosed)
            #expect(try await client.send(port: ports.publicPort, path: "/todo/doc1").status == 200)
            #expect(try await client.send("POST", port: admin, path: "/todo/_online").status == 200)
        }
    }

    @Test("_online with a delay answers at once and goes online later")
    func delayedOnline() async throws {
        try await Fixture.run { client, ports, registry in
            let database = try await registry.requireDatabase(named: "todo")
            #expect(try await client.send("POST", port: ports.adminPort, path: "/todo/_offline").status == 200)
            let reply = try await client.send(
                "POST", port: ports.adminPort, path: "/todo/_online", json: ["delay": 0.05])
            #expect(reply.status == 200)
            await database.waitUntil(.online)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/").jsonValue()["state"] == "Online")
            let bad = try await client.send("POST", port: ports.adminPort, path: "/todo/_online", json: ["delay": -1])
            #expect(bad.status == 400)
        }
    }

    // MARK: - Compact, purge, raw

    @Test("_compact removes non-leaf bodies and counts them; a second run finds nothing")
    func compact() async throws {
        try await Fixture.run { client, ports, registry in
            let admin = ports.adminPort
            var rev = try #require(
                try await client.send("PUT", port: admin, path: "/todo/doc", json: ["v": 1]).jsonValue()["rev"]?
                    .stringValue)
            for value in 2...3 {
                let reply = try await client.send(
                    "PUT", port: admin, path: "/todo/doc?rev=\(rev)", json: ["v": .int(Int64(value))])
                rev = try #require(try reply.jsonValue()["rev"]?.stringValue)
            }
            let database = try await registry.requireDatabase(named: "todo")
            let before = try #require(try database.storage.document(id: "doc"))
            let bodiesBefore = before.tree.nodes.filter { $0.body != nil }.count
            #expect(bodiesBefore >= 2)

            let compacted = try await client.send("POST", port: admin, path: "/todo/_compact")
            #expect(compacted.status == 200)
            #expect(try compacted.jsonValue() == ["revs": .int(Int64(bodiesBefore - 1))])
            let after = try #require(try database.storage.document(id: "doc"))
            #expect(after.tree.nodes.filter { $0.body != nil }.map(\.id) == [after.winner?.id])
            #expect(after.sequence == before.sequence)
            #expect(try await client.send(port: admin, path: "/todo/doc").jsonValue()["v"] == 3)
            #expect(try await client.send("POST", port: admin, path: "/todo/_compact").jsonValue() == ["revs": 0])
        }
    }

    @Test("_exp sets a document's expiry (shown with show_exp); the sweep purges it once passed; a bad _exp is 400")
    func expiry() async throws {
        try await Fixture.run { client, ports, registry in
            let admin = ports.adminPort
            #expect(try await client.send("PUT", port: admin, path: "/todo/brief", json: ["_exp": 3600, "v": 1]).status == 201)
            #expect(try await client.send("PUT", port: admin, path: "/todo/kept", json: ["v": 1]).status == 201)
            #expect(try await client.send("PUT", port: admin, path: "/todo/bad", json: ["_exp": "soon"]).status == 400)
            let shown = try await client.send(port: admin, path: "/todo/brief?show_exp=true").jsonValue()
            let expiry = try #require(shown["_exp"]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) })
            #expect(abs(expiry.timeIntervalSinceNow - 3600) < 60)
            #expect(shown["v"] == 1)
            let database = try await registry.requireDatabase(named: "todo")
            #expect(try database.purgeExpiredDocuments() == 0)
            #expect(try database.purgeExpiredDocuments(now: Date().addingTimeInterval(7200)) == 1)
            #expect(try await client.send(port: admin, path: "/todo/brief").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/kept").status == 200)
        }
    }

    @Test("_purge removes exactly the documents given as [\"*\"]")
    func purge() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            for id in ["doc1", "doc2"] {
                #expect(try await client.send("PUT", port: admin, path: "/todo/\(id)", json: ["a": 1]).status == 201)
            }
            let purged = try await client.send(
                "POST", port: admin, path: "/todo/_purge",
                json: ["doc1": ["*"], "doc2": ["1-abc"], "nope": ["*"]])
            #expect(purged.status == 200)
            #expect(try purged.jsonValue() == ["purged": ["doc1": ["*"]]])
            #expect(try await client.send(port: admin, path: "/todo/doc1").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/doc2").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_raw/doc1").status == 404)

            let notJSON = try await client.send(
                "POST", port: admin, path: "/todo/_purge", headers: ["Content-Type": "application/json"],
                body: Array("nope".utf8))
            #expect(notJSON.status == 400)
            #expect(try await client.send("POST", port: admin, path: "/todo/_purge", json: ["x", "y"]).status == 400)
        }
    }

    @Test("_flush empties an in-memory database back to its configuration; 404 for one kept in files")
    func flush() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flush-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Its own storage, whatever COUCHETTE_TEST_STORAGE says: flushing is about memory.
        let config = GatewayFixture.config(databases: [
            DatabaseConfig(
                name: "todo", users: ["alice": UserConfig(name: "alice", password: "pass", adminChannels: ["a"])]),
            DatabaseConfig(name: "kept", server: .directory(folder.path)),
        ])
        try await StreamingGateway.run(config) { _, client, ports in
            let admin = ports.adminPort
            #expect(try await client.send("PUT", port: admin, path: "/todo/doc", json: ["channels": ["a"]]).status == 201)
            let created = try await client.send(
                "PUT", port: admin, path: "/todo/_user/carol", json: ["password": "secret", "admin_channels": ["a"]])
            #expect(created.status == 201)
            let flushed = try await client.send("POST", port: admin, path: "/todo/_flush")
            #expect(flushed.status == 200)
            #expect(flushed.body.isEmpty)
            #expect(try await client.send(port: admin, path: "/todo/doc").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/").jsonValue()["doc_count"] == 0)
            // The configured user is back; the one made through the API is gone, as Sync Gateway's flush leaves it.
            #expect(try await client.send(port: ports.publicPort, path: "/todo/", user: ("alice", "pass")).status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_user/carol").status == 404)

            #expect(try await client.send("PUT", port: admin, path: "/kept/doc", json: ["v": 1]).status == 201)
            #expect(try await client.send("POST", port: admin, path: "/kept/_flush").status == 404)
            #expect(try await client.send(port: admin, path: "/kept/doc").status == 200)
            #expect(try await client.send("POST", port: admin, path: "/nowhere/_flush").status == 404)
            #expect(try await client.send("POST", port: ports.publicPort, path: "/todo/_flush", user: ("alice", "pass")).status == 404)
        }
    }

    @Test("_raw shows the body with _sync: rev, sequence, history, channels joined and left")
    func raw() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            let first = try await client.send("PUT", port: admin, path: "/todo/doc", json: ["channels": ["a"], "n": 1])
            let firstRev = try #require(try first.jsonValue()["rev"]?.stringValue)
            let second = try await client.send(
                "PUT", port: admin, path: "/todo/doc?rev=\(firstRev)", json: ["channels": ["b"], "n": 2])
            let secondRev = try #require(try second.jsonValue()["rev"]?.stringValue)

            let raw = try await client.send(port: admin, path: "/todo/_raw/doc")
            #expect(raw.status == 200)
            let body = try raw.jsonValue()
            #expect(body["n"] == 2)
            let sync = try #require(body["_sync"])
            #expect(sync["rev"] == .string(secondRev))
            let sequence = try #require(sync["sequence"]?.intValue)
            #expect(sync["history"]?["revs"] == [.string(firstRev), .string(secondRev)])
            #expect(sync["history"]?["parents"] == [-1, 0])
            #expect(sync["history"]?["channels"] == [["a"], ["b"]])
            #expect(sync["channels"]?["b"] == .null)
            #expect(sync["channels"]?["a"] == ["seq": .int(sequence), "rev": .string(secondRev)])
            #expect(sync["flags"] == nil)
            #expect(try await client.send(port: admin, path: "/todo/_raw/missing").status == 404)
            // Not served publicly (the public router may ask for a login before finding no such endpoint).
            #expect([401, 404].contains(try await client.send(port: ports.publicPort, path: "/todo/_raw/doc").status))
        }
    }

    @Test("_ensure_full_commit answers 201 with the instance start time on both ports")
    func ensureFullCommit() async throws {
        try await Fixture.run(Fixture.config(guest: true)) { client, ports, _ in
            let startTime = try await client.send(port: ports.adminPort, path: "/todo/").jsonValue()[
                "instance_start_time"]
            for port in [ports.publicPort, ports.adminPort] {
                let reply = try await client.send("POST", port: port, path: "/todo/_ensure_full_commit")
                #expect(reply.status == 201)
                #expect(try reply.jsonValue() == ["ok": true, "instance_start_time": startTime ?? .null])
            }
        }
    }

    // MARK: - Database configuration

    @Test("_config round-trips, applies users, roles and revs_limit, and never shows passwords")
    func configRoundTrip() async throws {
        var config = Fixture.config()
        config.databases["todo"]?.users["user1"] = UserConfig(name: "user1", password: "pass", adminChannels: ["u"])
        try await Fixture.run(config) { client, ports, registry in
            let admin = ports.adminPort
            let shown = try await client.send(port: admin, path: "/todo/_config")
            #expect(shown.status == 200)
            #expect(!shown.text.contains("pass\""))
            let json = try shown.jsonValue()
            #expect(json["name"] == "todo")
            let server = try #require(await registry.database(named: "todo")?.config.server)
            #expect(json["server"] == .string(server.description))
            #expect(json["revs_limit"] == 1000)
            #expect(json["users"]?["user1"]?["admin_channels"] == ["u"])
            #expect(json["users"]?["user1"]?["password"] == nil)
            #expect(json["roles"]?["moderator"] == ["admin_channels": ["moderators"]])

            // Sending it back changes nothing.
            let database = try await registry.requireDatabase(named: "todo")
            let sequenceBefore = try database.storage.lastSequence
            #expect(try await client.send("PUT", port: admin, path: "/todo/_config", json: json).status == 201)
            #expect(try await client.send(port: admin, path: "/todo/_config").jsonValue() == json)
            #expect(try database.storage.lastSequence == sequenceBefore)
            #expect(
                try await client.send(port: ports.publicPort, path: "/todo/", user: ("user1", "pass")).status == 200)

            // A new configuration: revs_limit at once, new role and user at new sequences, GUEST re-applied.
            let updated: JSONValue = [
                "server": "walrus:", "revs_limit": 5,
                "roles": ["moderator": ["admin_channels": ["moderators"]], "editor": ["admin_channels": ["drafts"]]],
                "users": [
                    "user2": ["password": "pass2", "admin_roles": ["editor"]],
                    "GUEST": ["admin_channels": ["public"]],
                ],
            ]
            #expect(try await client.send("PUT", port: admin, path: "/todo/_config", json: updated).status == 201)
            #expect(database.documents.revsLimit == 5)
            #expect(database.config.revsLimit == 5)
            #expect(try database.storage.lastSequence == sequenceBefore + 3)
            let user2 = try await client.send(port: admin, path: "/todo/_user/user2").jsonValue()
            #expect(user2["all_channels"] == ["!", "drafts"])
            #expect(
                try await client.send(port: ports.publicPort, path: "/todo/", user: ("user2", "pass2")).status == 200)
            #expect(try await client.send(port: ports.publicPort, path: "/todo/").status == 200)

            let invalid = try await client.send(
                "PUT", port: admin, path: "/todo/_config", json: ["revs_limit": "many"])
            #expect(invalid.status == 400)
            #expect(try invalid.jsonValue()["reason"]?.stringValue?.contains("revs_limit") == true)
            #expect(database.config.revsLimit == 5)
        }
    }

    @Test("_config/sync stores, shows and resets the sync function source")
    func syncFunction() async throws {
        try await Fixture.run { client, ports, registry in
            let admin = ports.adminPort
            let empty = try await client.send(port: admin, path: "/todo/_config/sync")
            #expect(empty.status == 200)
            #expect(empty.header("Content-Type") == "application/javascript")
            #expect(empty.body.isEmpty)

            let source = "function(doc, oldDoc) {\n  channel(doc.type);\n}"
            let put = try await client.send(
                "PUT", port: admin, path: "/todo/_config/sync", headers: ["Content-Type": "application/javascript"],
                body: Array(source.utf8))
            #expect(put.status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_config/sync").text == source)
            #expect(try await client.send(port: admin, path: "/todo/_config").jsonValue()["sync"] == .string(source))
            #expect(try await registry.requireDatabase(named: "todo").config.sync == source)

            #expect(try await client.send("DELETE", port: admin, path: "/todo/_config/sync").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_config/sync").body.isEmpty)
            #expect(
                [401, 404].contains(try await client.send(port: ports.publicPort, path: "/todo/_config/sync").status))
        }
    }

    // MARK: - Creating and deleting databases

    @Test("Databases are created and deleted at run time on the admin port only")
    func createAndDelete() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            let created = try await client.send(
                "PUT", port: admin, path: "/newdb/",
                json: ["server": "walrus:", "users": ["GUEST": ["admin_channels": ["*"]]]])
            #expect(created.status == 201)
            #expect(try created.jsonValue() == ["ok": true])
            #expect(try await client.send(port: admin, path: "/_all_dbs").jsonValue() == ["newdb", "todo"])
            #expect(
                try await client.send("PUT", port: ports.publicPort, path: "/newdb/doc", json: ["a": 1]).status == 201)
            #expect(try await client.send("PUT", port: admin, path: "/emptybody/").status == 201)

            let clash = try await client.send("PUT", port: admin, path: "/newdb/", json: [:])
            #expect(clash.status == 412)
            #expect(try await client.send("PUT", port: admin, path: "/BadName/", json: [:]).status == 400)
            #expect(try await client.send("PUT", port: admin, path: "/baddb/", json: ["revs_limit": "x"]).status == 400)

            let publicExisting = try await client.send("PUT", port: ports.publicPort, path: "/todo/")
            #expect(publicExisting.status == 412)
            let publicNew = try await client.send("PUT", port: ports.publicPort, path: "/other/")
            #expect(publicNew.status == 403)
            #expect(try publicNew.jsonValue()["reason"] == "Creating a DB over the public API is unsupported")

            let deleted = try await client.send("DELETE", port: admin, path: "/newdb/")
            #expect(deleted.status == 200)
            #expect(try deleted.jsonValue() == [:])
            #expect(try await client.send(port: admin, path: "/newdb/").status == 404)
            #expect(try await client.send("DELETE", port: admin, path: "/newdb/").status == 404)
            #expect(try await client.send("DELETE", port: ports.publicPort, path: "/todo/").status == 405)
            #expect(try await client.send(port: admin, path: "/_all_dbs").jsonValue() == ["emptybody", "todo"])
        }
    }
}
