import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AdminUITests

/// The Admin UI's server side over HTTP (its pages are driven in a browser by Tests/Browser): the page at every deep
/// link of the admin port, its assets, the CSRF defence of mutating admin calls, and the Live Preview's
/// `_sync_preview` inputs and outputs.
@Suite("Admin UI: pages, CSRF defence, Live Preview API", .timeLimit(.minutes(3)))
struct AdminUITests {
    typealias Fixture = AdminGatewayFixture

    @Test("The page answers at /_admin/ and every deep link, with its assets; not on the public port")
    func pagesAndAssets() async throws {
        try await Fixture.run { client, ports, _ in
            for path in ["/_admin", "/_admin/", "/_admin/db/todo", "/_admin/db/todo/users", "/_admin/db/todo/sync",
                         "/_admin/db/todo/documents/a%2Fb", "/_admin/db/todo/users/user1"] {
                let page = try await client.send(port: ports.adminPort, path: path)
                #expect(page.status == 200, "\(path)")
                #expect(page.header("Content-Type") == "text/html; charset=utf-8")
                #expect(page.text.contains(#"<script type="module" src="/_admin/assets/app.js">"#))
                #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            }
            for (asset, type) in [("app.js", "text/javascript"), ("sync.js", "text/javascript"), ("admin.css", "text/css")] {
                let reply = try await client.send(port: ports.adminPort, path: "/_admin/assets/\(asset)")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type")?.hasPrefix(type) == true)
            }
            #expect(try await client.send(port: ports.adminPort, path: "/_admin/assets/nope.js").status == 404)
            #expect(try await client.send(port: ports.adminPort, path: "/_admin/assets/..%2Fopenapi").status == 404)
            #expect(try await client.send(port: ports.publicPort, path: "/_admin/").status == 404)
        }
    }

    @Test("A cross-site browser request that changes something is refused; same-origin and scripts pass")
    func crossSiteWrites() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            let evil = try await client.send(
                "PUT", port: admin, path: "/todo/a", json: ["x": 1], headers: ["Origin": "http://evil.example"])
            #expect(evil.status == 403)
            #expect(try evil.jsonValue()["reason"] == "Cross-site request refused")
            let fetchSite = try await client.send(
                "DELETE", port: admin, path: "/todo/_config/sync", headers: ["Sec-Fetch-Site": "cross-site"])
            #expect(fetchSite.status == 403)
            let nullOrigin = try await client.send(
                "POST", port: admin, path: "/todo/_offline", headers: ["Origin": "null"])
            #expect(nullOrigin.status == 403)
            #expect(try await client.send(port: admin, path: "/todo/a").status == 404)  // nothing was stored
            // The Admin UI's own calls (same origin) and scripts (no Origin) pass; reads always pass.
            let sameOrigin = try await client.send(
                "PUT", port: admin, path: "/todo/a", json: ["x": 1],
                headers: ["Origin": "http://127.0.0.1:\(admin)", "Sec-Fetch-Site": "same-origin"])
            #expect(sameOrigin.status == 201)
            #expect(try await client.send("PUT", port: admin, path: "/todo/b", json: ["x": 1]).status == 201)
            let read = try await client.send(port: admin, path: "/todo/a", headers: ["Origin": "http://evil.example"])
            #expect(read.status == 200)
        }
    }

    @Test("Live Preview: pasted doc/oldDoc pairs, a sample of stored documents, console lines and failure details")
    func previewInputsAndOutputs() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            for id in ["s1", "s2", "s3"] {
                _ = try await client.send("PUT", port: admin, path: "/todo/\(id)", json: ["type": "list"])
            }
            let source = """
                function(doc, oldDoc) {
                  console.log("saw", doc._id, oldDoc ? oldDoc.type : null);
                  if (doc.boom) { doc.missing.property; }
                  if (oldDoc && oldDoc.type != doc.type) { throw({forbidden: "type is fixed"}); }
                  channel("t." + doc.type);
                }
                """
            let reply = try await client.send(
                "POST", port: admin, path: "/todo/_sync_preview",
                json: [
                    "sync": .string(source),
                    "pairs": [
                        ["doc": ["_id": "p", "type": "a"], "oldDoc": ["type": "b"]],
                        ["doc": ["_id": "q", "type": "a"], "oldDoc": .null],
                        ["doc": ["_id": "r", "boom": true]],
                    ],
                    "sample": 2,
                ])
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(try reply.jsonValue()["results"]?.arrayValue)
            #expect(results.count == 5)
            #expect(results[0]["status"] == 403 && results[0]["reason"] == "type is fixed")
            #expect(results[0]["logs"] == [["level": "log", "message": "saw p b"]])
            #expect(results[1]["channels"] == ["t.a"])
            #expect(results[1]["logs"] == [["level": "log", "message": "saw q null"]])
            #expect(results[2]["status"] == 500)
            #expect(results[2]["detail"]?.stringValue?.hasPrefix("TypeError") == true)
            let sampled = Set(results[3...].compactMap { $0["id"]?.stringValue })
            #expect(sampled.count == 2 && sampled.isSubset(of: ["s1", "s2", "s3"]))
            #expect(results[3...].allSatisfy { $0["channels"] == ["t.list"] })
            // Nothing was stored.
            #expect(try await client.send(port: admin, path: "/todo/q").status == 404)
            let bad = try await client.send(
                "POST", port: admin, path: "/todo/_sync_preview", json: ["pairs": [["oldDoc": [:]]]])
            #expect(bad.status == 400)
            let tooMany = try await client.send("POST", port: admin, path: "/todo/_sync_preview", json: ["sample": 5000])
            #expect(tooMany.status == 400)
        }
    }

    @Test("Impact before deploy: documents that change or become refused, principals that gain or lose")
    func impact() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            _ = try await client.send("PUT", port: admin, path: "/todo/a", json: ["type": "x", "owner": "alice"])
            _ = try await client.send("PUT", port: admin, path: "/todo/b", json: ["type": "y"])
            _ = try await client.send("PUT", port: admin, path: "/todo/c", json: ["channels": ["keep"]])
            let source = """
                function(doc) {
                  if (doc.type == "y") { throw({forbidden: "no y"}); }
                  channel(doc.channels); channel(doc.type);
                  access(doc.owner, doc.type); role(doc.owner, "role:r");
                }
                """
            let reply = try await client.send(
                "POST", port: admin, path: "/todo/_sync_impact", json: ["sync": .string(source), "all": true])
            #expect(reply.status == 200, "\(reply.text)")
            let report = try reply.jsonValue()
            #expect(report["documents"] == 3 && report["changed"] == 2 && report["refused"] == 1 && report["accepted"] == 0)
            let changes = try #require(report["changes"]?.arrayValue)
            #expect(changes.contains(["id": "a", "channels": ["added": ["x"], "removed": []],
                                      "access": ["alice": ["added": ["x"], "removed": []]],
                                      "roles": ["alice": ["added": ["r"], "removed": []]]]))
            #expect(changes.contains(["id": "b", "refused": "403 no y"]))
            #expect(report["principals"] == ["alice": ["gains": ["role:r", "x"], "loses": []]])
            // A sample compares that many; nothing is stored; a function that does not compile names its line.
            let sampled = try await client.send(
                "POST", port: admin, path: "/todo/_sync_impact", json: ["sync": .string(source), "sample": 1])
            #expect(try sampled.jsonValue()["documents"] == 1)
            #expect(try await client.send(port: admin, path: "/todo/a").jsonValue()["_rev"]?.stringValue?.hasPrefix("1-") == true)
            let bad = try await client.send(
                "POST", port: admin, path: "/todo/_sync_impact", json: ["sync": "function(doc) {\n  channel(\n}"])
            #expect(bad.status == 400)
            #expect(try bad.jsonValue()["reason"]?.stringValue?.contains("(line") == true)
        }
    }

    @Test("Each deploy is kept as a version, newest first; deploying an old one again is a rollback")
    func syncFunctionHistory() async throws {
        var config = Fixture.config()
        config.databases["todo"]?.sync = "function(doc){ channel('from-config'); }"
        try await Fixture.run(config) { client, ports, _ in
            let admin = ports.adminPort
            func deploy(_ source: String) async throws {
                let reply = try await client.send(
                    "PUT", port: admin, path: "/todo/_config/sync", headers: ["Content-Type": "application/javascript"],
                    body: Array(source.utf8))
                #expect(reply.status == 200)
            }
            func history() async throws -> [JSONValue] {
                let reply = try await client.send(port: admin, path: "/todo/_config/sync/history")
                return try #require(try reply.jsonValue()["versions"]?.arrayValue)
            }
            #expect(try await history().isEmpty)
            try await deploy("function(doc){ channel('a'); }")
            try await deploy("function(doc){ channel('a'); }")  // the same again: no new version
            try await deploy("function(doc){ channel('b'); }")
            let versions = try await history()
            #expect(versions.map { $0["version"] } == [3, 2, 1])
            #expect(versions.map { $0["sync"] } == [
                "function(doc){ channel('b'); }", "function(doc){ channel('a'); }", "function(doc){ channel('from-config'); }",
            ])
            #expect(versions.allSatisfy { $0["deployed"]?.stringValue?.hasSuffix("Z") == true })
            // Rolling back to version 2 is deploying it again; writes follow it.
            try await deploy(try #require(versions[1]["sync"]?.stringValue))
            #expect(try await history().first?["version"] == 4)
            _ = try await client.send("PUT", port: admin, path: "/todo/d", json: [:])
            let channels = try await client.send(port: admin, path: "/todo/_all_docs?channels=true").jsonValue()
            #expect(channels["rows"]?[0]?["value"]?["channels"] == ["a"])
            // Back to the default function: recorded as a version without source.
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_config/sync").status == 200)
            #expect(try await history().first?["sync"] == .null)
        }
    }

    @Test("An online resync runs in the background with its progress; the database stays online")
    func backgroundResync() async throws {
        try await Fixture.run { client, ports, registry in
            let admin = ports.adminPort
            for id in ["a", "b", "c"] { _ = try await client.send("PUT", port: admin, path: "/todo/\(id)", json: ["type": "t"]) }
            #expect(try await client.send(port: admin, path: "/todo/_resync").jsonValue()["status"] == "idle")
            let deploy = try await client.send(
                "PUT", port: admin, path: "/todo/_config/sync", headers: ["Content-Type": "application/javascript"],
                body: Array("function(doc){ channel('all'); }".utf8))
            #expect(deploy.status == 200)
            let started = try await client.send("POST", port: admin, path: "/todo/_resync?action=start")
            #expect(started.status == 200)
            #expect(["running", "completed"].contains(try started.jsonValue()["status"]?.stringValue ?? ""))
            let database = try await registry.requireDatabase(named: "todo")
            let final = await database.resyncJob.finished()
            #expect(final.status == .completed && final.processed == 3 && final.changed == 3 && final.total == 3)
            let status = try await client.send(port: admin, path: "/todo/_resync").jsonValue()
            #expect(status == ["status": "completed", "docs_processed": 3, "docs_changed": 3, "docs_total": 3])
            #expect(try await client.send(port: admin, path: "/todo/").jsonValue()["state"] == "Online")
            let channels = try await client.send(port: admin, path: "/todo/_all_docs?channels=true").jsonValue()
            #expect(channels["rows"]?[0]?["value"]?["channels"] == ["all"])
            #expect(try await client.send("POST", port: admin, path: "/todo/_resync?action=dance").status == 400)
        }
    }

    @Test("The access explainer: each channel and role with how it is held; reading and writing a document; readers")
    func accessExplainer() async throws {
        var config = Fixture.config()
        config.databases["todo"]?.users = [
            "alice": UserConfig(name: "alice", password: "pass", adminRoles: ["moderator"]),
            "bob": UserConfig(name: "bob", password: "pass", adminChannels: ["news"]),
        ]
        config.databases["todo"]?.sync = """
            function(doc) { channel(doc.list); access(doc.owner, doc.list); access("role:moderator", doc.watch); requireUser(doc.owner); }
            """
        try await Fixture.run(config) { client, ports, _ in
            let admin = ports.adminPort
            _ = try await client.send("PUT", port: admin, path: "/todo/a", json: ["list": "lists.a", "owner": "bob", "watch": "audit"])
            let bob = try await client.send(port: admin, path: "/todo/_access?user=bob&doc=a").jsonValue()
            #expect(bob["channels"]?["news"] == [["via": "admin"]])
            #expect(bob["channels"]?["lists.a"] == [["via": "document", "doc": "a", "seq": 1]])
            #expect(bob["channels"]?["!"] == [["via": "public"]])
            #expect(bob["document"]?["can_read"] == true && bob["document"]?["read_through"] == ["lists.a"])
            #expect(bob["document"]?["can_write"] == true)
            let alice = try await client.send(port: admin, path: "/todo/_access?user=alice&doc=a").jsonValue()
            #expect(alice["roles"]?["moderator"] == [["via": "admin"]])
            #expect(alice["channels"]?["moderators"] == [["via": "role", "role": "moderator", "how": "admin"]])
            #expect(alice["channels"]?["audit"] == [["via": "role", "role": "moderator", "how": "document", "doc": "a", "seq": 1]])
            #expect(alice["document"]?["can_read"] == false)
            #expect(alice["document"]?["can_write"] == false && alice["document"]?["write_refused"] == "403 wrong user")
            let readers = try await client.send(port: admin, path: "/todo/_access?channel=audit").jsonValue()
            #expect(readers == ["channel": "audit", "users": ["alice"], "roles": ["moderator"]])
            #expect(try await client.send(port: admin, path: "/todo/_access?user=nobody").status == 404)
            #expect(try await client.send(port: admin, path: "/todo/_access").status == 400)
            _ = try await client.send("PUT", port: admin, path: "/todo/b", json: ["list": "lists.a", "owner": "bob"])
            let channels = try await client.send(port: admin, path: "/todo/_channels").jsonValue()
            #expect(channels == ["channels": [["name": "lists.a", "documents": 2]]])
            // Not on the public port.
            let publicReply = try await client.send(port: ports.publicPort, path: "/todo/_access?user=bob", user: ("bob", "pass"))
            #expect(publicReply.status == 404)
        }
    }

    @Test("The log tail: lines after a number, by level and key")
    func logTail() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            #expect(try await client.send("PUT", port: admin, path: "/_logging", json: ["CRUD": true]).status == 200)
            _ = try await client.send("PUT", port: admin, path: "/todo/tailed", json: ["x": 1])
            let tail = try await client.send(port: admin, path: "/_logging/tail?key=crud").jsonValue()
            let messages = (tail["lines"]?.arrayValue ?? []).compactMap { $0["message"]?.stringValue }
            #expect(messages.contains { $0.hasPrefix("CRUD: Stored doc \"tailed\"") }, "\(messages)")
            #expect(messages.allSatisfy { $0.hasPrefix("CRUD:") })
            let last = try #require(tail["last"]?.intValue)
            let after = try await client.send(port: admin, path: "/_logging/tail?since=\(last)&key=CRUD").jsonValue()
            #expect(after["lines"] == [])
            let warnings = try await client.send(port: admin, path: "/_logging/tail?level=error").jsonValue()
            #expect((warnings["lines"]?.arrayValue ?? []).allSatisfy { $0["level"] == "error" || $0["level"] == "critical" })
            #expect(try await client.send(port: admin, path: "/_logging/tail?level=loud").status == 400)
        }
    }

    @Test("A user's sessions are listed for the admin, and one can be revoked")
    func userSessions() async throws {
        var config = Fixture.config()
        config.databases["todo"]?.users = ["bob": UserConfig(name: "bob", password: "pass")]
        try await Fixture.run(config) { client, ports, _ in
            let admin = ports.adminPort
            for _ in 0..<2 {
                let login = try await client.send(
                    "POST", port: ports.publicPort, path: "/todo/_session", json: ["name": "bob", "password": "pass"])
                #expect(login.status == 200)
            }
            let listed = try #require(try await client.send(port: admin, path: "/todo/_user/bob/_session").jsonValue()["sessions"]?.arrayValue)
            #expect(listed.count == 2)
            let id = try #require(listed.first?["id"]?.stringValue)
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_user/bob/_session/\(id)").status == 200)
            let after = try await client.send(port: admin, path: "/todo/_user/bob/_session").jsonValue()
            #expect(after["sessions"]?.arrayValue?.count == 1)
            #expect(try await client.send(port: admin, path: "/todo/_user/nobody/_session").status == 404)
        }
    }

    @Test("With adminUsername/adminPassword set, the page and its calls need them (the browser asks: the UI's login)")
    func loginWhenCredentialsAreSet() async throws {
        var config = Fixture.config()
        config.adminCredentials = BasicCredentials(username: "admin", password: "s3cret")
        try await Fixture.run(config) { client, ports, _ in
            let anonymous = try await client.send(port: ports.adminPort, path: "/_admin/db/todo/sync")
            #expect(anonymous.status == 401)
            #expect(anonymous.header("WWW-Authenticate") == #"Basic realm="Couchbase Sync Gateway""#)
            #expect(try await client.send(port: ports.adminPort, path: "/_admin/assets/app.js").status == 401)
            let page = try await client.send(port: ports.adminPort, path: "/_admin/db/todo/sync", user: ("admin", "s3cret"))
            #expect(page.status == 200)
            let wrong = try await client.send(port: ports.adminPort, path: "/_admin/", user: ("admin", "guess"))
            #expect(wrong.status == 401)
        }
    }
}
