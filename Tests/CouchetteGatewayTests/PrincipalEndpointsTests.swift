import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - PrincipalEndpointsTests

/// Users and roles over the admin port (gateway-rest-api.md §14), on real sockets.
@Suite("Principal endpoints over HTTP", .timeLimit(.minutes(5)))
struct PrincipalEndpointsTests {
    typealias Fixture = AdminGatewayFixture

    // MARK: - The tutorial's curl calls

    @Test("The tutorial's user creation, role assignment and password change, replayed")
    func tutorialReplay() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            // curl -vX PUT 'http://localhost:4985/todo/_user/user1' -d '{"name": "user1","password": "pass"}'
            let created = try await client.send(
                "PUT", port: admin, path: "/todo/_user/user1", headers: ["Content-Type": "application/json"],
                body: Array(#"{"name": "user1","password": "pass"}"#.utf8))
            #expect(created.status == 201)
            #expect(created.body.isEmpty)

            // The user can now authenticate on the public port.
            #expect(
                try await client.send(port: ports.publicPort, path: "/todo/", user: ("user1", "pass")).status == 200)

            // curl -H 'Content-Type: application/json' -vX PUT '…/todo/_user/user1' -d '{"admin_roles": ["moderator"]}'
            let replaced = try await client.send(
                "PUT", port: admin, path: "/todo/_user/user1", headers: ["Content-Type": "application/json"],
                body: Array(#"{"admin_roles": ["moderator"]}"#.utf8))
            #expect(replaced.status == 200)
            #expect(replaced.body.isEmpty)

            let user = try await client.send(port: admin, path: "/todo/_user/user1").jsonValue()
            #expect(user["name"] == "user1")
            #expect(user["admin_roles"] == ["moderator"])
            #expect(user["roles"] == ["moderator"])
            #expect(user["admin_channels"] == [])
            #expect(user["all_channels"] == ["!", "moderators"])
            #expect(user["password"] == nil)
            #expect(user["password_hash"] == nil)

            // The password was kept by the replacement.
            let login = try await client.send(
                "POST", port: ports.publicPort, path: "/todo/_session", json: ["name": "user1", "password": "pass"])
            #expect(login.status == 200)
            let cookie = try #require(Fixture.sessionCookie(in: login))

            // curl -vX PUT '…/todo/_user/user1' -d '{"name": "user1","password": "newpass"}'
            let changed = try await client.send(
                "PUT", port: admin, path: "/todo/_user/user1", json: ["name": "user1", "password": "newpass"])
            #expect(changed.status == 200)

            // The old password and the session are dead: 401 Unauthorized, as the tutorial's replicator sees.
            let oldPassword = try await client.send(port: ports.publicPort, path: "/todo/", user: ("user1", "pass"))
            #expect(oldPassword.status == 401)
            #expect(oldPassword.header("WWW-Authenticate") == #"Basic realm="Couchbase Sync Gateway""#)
            #expect(try oldPassword.jsonValue()["reason"] == "Invalid login")
            let oldSession = try await client.send(
                port: ports.publicPort, path: "/todo/", headers: Fixture.cookieHeader(cookie))
            #expect(oldSession.status == 401)
            #expect(try oldSession.jsonValue()["reason"] == "Login required")
            #expect(
                try await client.send(port: ports.publicPort, path: "/todo/", user: ("user1", "newpass")).status == 200)
        }
    }

    // MARK: - Users

    @Test("User listing, creation by POST, replace semantics, deletion")
    func userLifecycle() async throws {
        try await Fixture.run { client, ports, registry in
            let admin = ports.adminPort
            #expect(try await client.send(port: admin, path: "/todo/_user/").jsonValue() == [])

            let posted = try await client.send(
                "POST", port: admin, path: "/todo/_user/",
                json: ["name": "alice", "password": "secret", "admin_channels": ["a", "b"], "email": "a@example.com"])
            #expect(posted.status == 201)
            #expect(posted.body.isEmpty)
            let again = try await client.send(
                "POST", port: admin, path: "/todo/_user/", json: ["name": "alice", "password": "secret"])
            #expect(again.status == 409)
            #expect(try again.jsonValue()["reason"] == "Already exists")
            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_user/bob", json: ["password": "pwd"]).status
                    == 201)
            #expect(try await client.send(port: admin, path: "/todo/_user").jsonValue() == ["alice", "bob"])

            var alice = try await client.send(port: admin, path: "/todo/_user/alice").jsonValue()
            #expect(alice["admin_channels"] == ["a", "b"])
            #expect(alice["all_channels"] == ["!", "a", "b"])
            #expect(alice["email"] == "a@example.com")

            // Replace: omitted fields are cleared, the password is kept.
            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_user/alice", json: ["disabled": true]).status
                    == 200)
            alice = try await client.send(port: admin, path: "/todo/_user/alice").jsonValue()
            #expect(alice["admin_channels"] == [])
            #expect(alice["email"] == nil)
            #expect(alice["disabled"] == true)
            let database = try await registry.requireDatabase(named: "todo")
            #expect(try database.storage.user(named: "alice")?.passwordHash != nil)

            // A disabled user cannot log in.
            let refused = try await client.send(port: ports.publicPort, path: "/todo/", user: ("alice", "secret"))
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate") != nil)

            #expect(try await client.send("DELETE", port: admin, path: "/todo/_user/alice").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_user/alice").status == 404)
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_user/alice").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/_user/").jsonValue() == ["bob"])
        }
    }

    @Test("Bad user bodies are 400s with Sync Gateway's messages")
    func userErrors() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            let cases: [(String, String, JSONValue, String)] = [
                ("POST", "/todo/_user/", ["password": "pass"], "Missing name property"),
                (
                    "PUT", "/todo/_user/carol", ["name": "dave", "password": "pass"],
                    "Name mismatch (can't change name)"
                ),
                ("PUT", "/todo/_user/bad%20name", ["password": "pass"], "Invalid name"),
                ("PUT", "/todo/_user/carol", [:], "Empty passwords are not allowed "),
                ("PUT", "/todo/_user/carol", ["password": "ab"], "Passwords must be at least three 3 characters"),
                ("PUT", "/todo/_user/carol", ["password": "pass", "admin_channels": ["a,b"]], "Illegal channel name"),
                (
                    "PUT", "/todo/_user/carol", ["password": "pass", "disabled": "yes"],
                    #""disabled" must be a boolean"#
                ),
            ]
            for (method, path, body, reason) in cases {
                let reply = try await client.send(method, port: admin, path: path, json: body)
                #expect(reply.status == 400, "\(method) \(path) \(body)")
                #expect(try reply.jsonValue()["reason"] == .string(reason), "\(method) \(path) \(body)")
            }
            let notJSON = try await client.send(
                "PUT", port: admin, path: "/todo/_user/carol", headers: ["Content-Type": "application/json"],
                body: Array("{nope".utf8))
            #expect(notJSON.status == 400)
            let wrongType = try await client.send(
                "PUT", port: admin, path: "/todo/_user/carol", headers: ["Content-Type": "image/png"],
                body: Array(#"{"password":"pass"}"#.utf8))
            #expect(wrongType.status == 415)
            #expect(try await client.send(port: admin, path: "/todo/_user/nobody").status == 404)
            #expect(try await client.send(port: admin, path: "/nope/_user/").status == 404)
        }
    }

    @Test("GUEST is readable and updatable, and drives anonymous access")
    func guest() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            var guest = try await client.send(port: admin, path: "/todo/_user/GUEST").jsonValue()
            #expect(guest["name"] == "GUEST")
            #expect(guest["disabled"] == true)
            let anonymous = try await client.send(port: ports.publicPort, path: "/todo/")
            #expect(anonymous.status == 401)
            #expect(try anonymous.jsonValue()["reason"] == "Login required")
            #expect(anonymous.header("WWW-Authenticate") != nil)

            let enabled = try await client.send(
                "PUT", port: admin, path: "/todo/_user/GUEST", json: ["admin_channels": ["public"], "password": "x"])
            #expect(enabled.status == 200)
            guest = try await client.send(port: admin, path: "/todo/_user/GUEST").jsonValue()
            #expect(guest["disabled"] == nil)
            #expect(guest["all_channels"] == ["!", "public"])
            #expect(try await client.send(port: ports.publicPort, path: "/todo/").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_user/").jsonValue() == [])
        }
    }

    // MARK: - Roles

    @Test("Roles: list, create, replace, read, delete; users see their roles' channels")
    func roles() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            #expect(try await client.send(port: admin, path: "/todo/_role/").jsonValue() == ["moderator"])
            #expect(
                try await client.send("POST", port: admin, path: "/todo/_role/", json: ["name": "editor"]).status
                    == 201)
            let clash = try await client.send("POST", port: admin, path: "/todo/_role/", json: ["name": "editor"])
            #expect(clash.status == 409)
            let replaced = try await client.send(
                "PUT", port: admin, path: "/todo/_role/editor", json: ["admin_channels": ["drafts", "*"]])
            #expect(replaced.status == 200)
            let editor = try await client.send(port: admin, path: "/todo/_role/editor").jsonValue()
            #expect(editor == ["name": "editor", "admin_channels": ["*", "drafts"], "all_channels": ["*"]])
            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_role/writer", json: [:]).status == 201)
            #expect(
                try await client.send(port: admin, path: "/todo/_role/").jsonValue()
                    == ["editor", "moderator", "writer"])

            #expect(
                try await client.send(
                    "PUT", port: admin, path: "/todo/_user/eve",
                    json: ["password": "pwd", "admin_roles": ["moderator", "writer"]]
                ).status == 201)
            let eve = try await client.send(port: admin, path: "/todo/_user/eve").jsonValue()
            #expect(eve["all_channels"] == ["!", "moderators"])
            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_user/eve", json: ["admin_roles": ["role:x"]])
                    .status == 400)

            #expect(try await client.send("DELETE", port: admin, path: "/todo/_role/moderator").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_role/moderator").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/_user/eve").jsonValue()["all_channels"] == ["!"])
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_role/moderator").status == 404)
        }
    }

    @Test("The public port has no user or role endpoints")
    func publicPortHasNone() async throws {
        try await Fixture.run(Fixture.config(guest: true)) { client, ports, _ in
            for path in ["/todo/_user/", "/todo/_user/GUEST", "/todo/_role/", "/todo/_role/moderator"] {
                #expect(try await client.send(port: ports.publicPort, path: path).status == 404, "\(path)")
            }
            let put = try await client.send(
                "PUT", port: ports.publicPort, path: "/todo/_user/mallory", json: ["password": "pass"])
            #expect(put.status != 201 && put.status != 200)
        }
    }

    // MARK: - Sequences

    @Test("Each principal change takes a new database sequence, shared with documents")
    func sequences() async throws {
        try await Fixture.run { client, ports, registry in
            let admin = ports.adminPort
            let database = try await registry.requireDatabase(named: "todo")
            let start = try database.storage.lastSequence
            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_user/u1", json: ["password": "pwd"]).status
                    == 201)
            let u1 = try #require(try database.storage.user(named: "u1"))
            #expect(u1.sequence == start + 1)
            #expect(
                try await client.send(port: admin, path: "/todo/").jsonValue()["update_seq"] == .int(Int64(start + 1)))

            // An identical replacement changes nothing and takes no sequence.
            #expect(try await client.send("PUT", port: admin, path: "/todo/_user/u1", json: [:]).status == 200)
            #expect(try database.storage.lastSequence == start + 1)

            #expect(try await client.send("PUT", port: admin, path: "/todo/_role/r1", json: [:]).status == 201)
            #expect(try database.storage.role(named: "r1")?.sequence == start + 2)

            let doc = try await client.send("PUT", port: admin, path: "/todo/doc1", json: ["a": 1])
            #expect(doc.status == 201)
            #expect(try database.storage.document(id: "doc1")?.sequence == start + 3)

            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_user/u1", json: ["admin_channels": ["x"]])
                    .status == 200)
            #expect(try database.storage.user(named: "u1")?.sequence == start + 4)
        }
    }
}
