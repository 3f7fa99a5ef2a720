import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SessionEndpointsTests

/// Sessions over HTTP (gateway-rest-api.md §13): cookie login and logout, session information, admin-created
/// sessions, expiry and sliding refresh, CORS login origins.
@Suite("Session endpoints over HTTP", .timeLimit(.minutes(5)))
struct SessionEndpointsTests {
    typealias Fixture = AdminGatewayFixture

    /// Creates `user1`/`pass` with channel `user1`.
    private func createUser(_ client: HTTPTestClient, _ ports: BoundPorts) async throws {
        let reply = try await client.send(
            "PUT", port: ports.adminPort, path: "/todo/_user/user1",
            json: ["password": "pass", "admin_channels": ["user1"]])
        try #require(reply.status == 201)
    }

    // MARK: - Public login and logout

    @Test("Cookie login, session information, use of the cookie, logout")
    func cookieLogin() async throws {
        try await Fixture.run { client, ports, _ in
            try await createUser(client, ports)
            let port = ports.publicPort

            // GET /_session needs no login.
            let anonymous = try await client.send(port: port, path: "/todo/_session").jsonValue()
            #expect(anonymous["ok"] == true)
            #expect(anonymous["authentication_handlers"] == ["default", "cookie"])
            #expect(anonymous["userCtx"] == ["name": .null, "channels": [:]])

            let login = try await client.send(
                "POST", port: port, path: "/todo/_session", json: ["name": "user1", "password": "pass"])
            #expect(login.status == 200)
            let setCookie = try #require(login.header("Set-Cookie"))
            #expect(setCookie.contains("Path=/todo"))
            #expect(setCookie.contains("Expires="))
            #expect(setCookie.contains("HttpOnly"))
            let cookie = try #require(Fixture.sessionCookie(in: login))
            #expect(Session.isWellFormedID(cookie))
            let context = try login.jsonValue()["userCtx"]
            #expect(context?["name"] == "user1")
            #expect(context?["channels"]?["!"] == 1)
            #expect(context?["channels"]?["user1"] != nil)

            let info = try await client.send(port: port, path: "/todo/_session", headers: Fixture.cookieHeader(cookie))
            #expect(try info.jsonValue()["userCtx"]?["name"] == "user1")
            #expect(
                try await client.send(port: port, path: "/todo/", headers: Fixture.cookieHeader(cookie)).status == 200)

            let logout = try await client.send(
                "DELETE", port: port, path: "/todo/_session", headers: Fixture.cookieHeader(cookie))
            #expect(logout.status == 200)
            let cleared = try #require(logout.header("Set-Cookie"))
            #expect(cleared.hasPrefix("\(Session.cookieName)=;"))
            #expect(cleared.contains("1970"))
            #expect(
                try await client.send(port: port, path: "/todo/", headers: Fixture.cookieHeader(cookie)).status == 401)

            let noCookie = try await client.send("DELETE", port: port, path: "/todo/_session")
            #expect(noCookie.status == 404)
            #expect(try noCookie.jsonValue()["reason"] == "no session")
        }
    }

    @Test("Login with Basic credentials instead of a body; bad logins are 401 Invalid login")
    func loginVariants() async throws {
        try await Fixture.run { client, ports, _ in
            try await createUser(client, ports)
            let port = ports.publicPort
            let basic = try await client.send("POST", port: port, path: "/todo/_session", user: ("user1", "pass"))
            #expect(basic.status == 200)
            #expect(Fixture.sessionCookie(in: basic) != nil)

            let failures: [JSONValue] = [
                ["name": "user1", "password": "wrong"], ["name": "nobody", "password": "pass"], ["name": "GUEST"], [:],
            ]
            for body in failures {
                let reply = try await client.send("POST", port: port, path: "/todo/_session", json: body)
                #expect(reply.status == 401, "\(body)")
                #expect(try reply.jsonValue()["reason"] == "Invalid login", "\(body)")
                #expect(reply.header("WWW-Authenticate") == #"Basic realm="Couchbase Sync Gateway""#)
                #expect(reply.header("Set-Cookie") == nil)
            }
            let wrongBasic = try await client.send("POST", port: port, path: "/todo/_session", user: ("user1", "nope"))
            #expect(wrongBasic.status == 401)

            // A disabled user cannot log in.
            #expect(
                try await client.send(
                    "PUT", port: ports.adminPort, path: "/todo/_user/user1", json: ["disabled": true]
                ).status == 200)
            let disabled = try await client.send(
                "POST", port: port, path: "/todo/_session", json: ["name": "user1", "password": "pass"])
            #expect(disabled.status == 401)
        }
    }

    @Test("An Origin outside login_origin cannot log in or out: 400 No CORS")
    func loginOrigins() async throws {
        var config = Fixture.config()
        config.cors = CORSConfig(origins: ["*"], loginOrigins: ["http://app.example.com"])
        try await Fixture.run(config) { client, ports, _ in
            try await createUser(client, ports)
            let credentials: JSONValue = ["name": "user1", "password": "pass"]
            let foreign = try await client.send(
                "POST", port: ports.publicPort, path: "/todo/_session", json: credentials,
                headers: ["Origin": "http://evil.example.com"])
            #expect(foreign.status == 400)
            #expect(try foreign.jsonValue()["reason"] == "No CORS")
            let allowed = try await client.send(
                "POST", port: ports.publicPort, path: "/todo/_session", json: credentials,
                headers: ["Origin": "http://app.example.com"])
            #expect(allowed.status == 200)
            let cookie = try #require(Fixture.sessionCookie(in: allowed))
            var headers = Fixture.cookieHeader(cookie)
            headers["Origin"] = "http://evil.example.com"
            let logout = try await client.send(
                "DELETE", port: ports.publicPort, path: "/todo/_session", headers: headers)
            #expect(logout.status == 400)
        }
    }

    @Test("GUEST disabled: endpoints needing a user answer 401 Login required, /_session still works")
    func guestDisabled() async throws {
        try await Fixture.run { client, ports, _ in
            let reply = try await client.send(port: ports.publicPort, path: "/todo/doc1")
            #expect(reply.status == 401)
            #expect(try reply.jsonValue()["reason"] == "Login required")
            #expect(reply.header("WWW-Authenticate") == #"Basic realm="Couchbase Sync Gateway""#)
            #expect(try await client.send(port: ports.publicPort, path: "/todo/_session").status == 200)
        }
    }

    @Test("GUEST enabled: the session information has a null name and GUEST's channels")
    func guestEnabled() async throws {
        try await Fixture.run(Fixture.config(guest: true)) { client, ports, _ in
            let info = try await client.send(port: ports.publicPort, path: "/todo/_session").jsonValue()
            #expect(info["userCtx"]?["name"] == .null)
            #expect(info["userCtx"]?["channels"]?["*"] != nil)
        }
    }

    // MARK: - Admin sessions

    @Test("An admin-created session works as a cookie; lookup and deletion by ID and by user")
    func adminSessions() async throws {
        try await Fixture.run { client, ports, _ in
            try await createUser(client, ports)
            let admin = ports.adminPort
            let created = try await client.send(
                "POST", port: admin, path: "/todo/_session", json: ["name": "user1", "ttl": 3600])
            #expect(created.status == 200)
            #expect(created.header("Set-Cookie") == nil)
            let body = try created.jsonValue()
            #expect(body["cookie_name"] == "SyncGatewaySession")
            let id = try #require(body["session_id"]?.stringValue)
            let expiresText = try #require(body["expires"]?.stringValue)
            let expires = try Date(
                expiresText, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
            #expect(abs(expires.timeIntervalSinceNow - 3600) < 60)

            #expect(
                try await client.send(port: ports.publicPort, path: "/todo/", headers: Fixture.cookieHeader(id)).status
                    == 200)
            let info = try await client.send(port: admin, path: "/todo/_session/\(id)").jsonValue()
            #expect(info["userCtx"]?["name"] == "user1")

            // Deleting another user's session by ID under the wrong user is a 404.
            #expect(
                try await client.send("PUT", port: admin, path: "/todo/_user/other", json: ["password": "pwd"]).status
                    == 201)
            #expect(
                try await client.send("DELETE", port: admin, path: "/todo/_user/other/_session/\(id)").status == 404)
            #expect(
                try await client.send("DELETE", port: admin, path: "/todo/_user/user1/_session/\(id)").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/_session/\(id)").status == 404)
            #expect(
                try await client.send(port: ports.publicPort, path: "/todo/", headers: Fixture.cookieHeader(id)).status
                    == 401)

            // DELETE /_session/{id}, and every session of a user at once.
            let second = try await client.send("POST", port: admin, path: "/todo/_session", json: ["name": "user1"])
            let secondID = try #require(try second.jsonValue()["session_id"]?.stringValue)
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_session/\(secondID)").status == 200)
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_session/\(secondID)").status == 404)
            for _ in 0..<2 {
                _ = try await client.send("POST", port: admin, path: "/todo/_session", json: ["name": "user1"])
            }
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_user/user1/_session").status == 200)
            #expect(try await client.send("DELETE", port: admin, path: "/todo/_user/nobody/_session").status == 404)
        }
    }

    @Test("Admin session creation errors")
    func adminSessionErrors() async throws {
        try await Fixture.run { client, ports, _ in
            try await createUser(client, ports)
            let cases: [(JSONValue, Int, String)] = [
                (["ttl": 60], 400, "Invalid or missing user name"),
                (["name": "GUEST"], 400, "Invalid or missing user name"),
                (["name": "bad name"], 400, "Invalid or missing user name"),
                (["name": "nobody"], 404, #"No such user "nobody""#),
                (["name": "user1", "ttl": 0], 400, "Invalid or missing ttl"),
                (["name": "user1", "ttl": "long"], 400, "Invalid or missing ttl"),
            ]
            for (body, status, reason) in cases {
                let reply = try await client.send("POST", port: ports.adminPort, path: "/todo/_session", json: body)
                #expect(reply.status == status, "\(body)")
                #expect(try reply.jsonValue()["reason"] == .string(reason), "\(body)")
            }
            #expect(
                try await client.send(port: ports.adminPort, path: "/todo/_session/\(Session.makeID())").status == 404)
        }
    }

    // MARK: - Expiry and refresh

    @Test("Expired sessions are ignored; sessions past 10 % of their TTL are refreshed and the cookie re-set")
    func expiryAndRefresh() async throws {
        try await Fixture.run { client, ports, registry in
            try await createUser(client, ports)
            let database = try await registry.requireDatabase(named: "todo")
            let now = Date()
            let expired = Session(id: Session.makeID(), username: "user1", expires: now - 1, ttl: 3600)
            let aging = Session(id: Session.makeID(), username: "user1", expires: now + 1800, ttl: 3600)
            let fresh = Session(id: Session.makeID(), username: "user1", expires: now + 3600, ttl: 3600)
            for session in [expired, aging, fresh] { try database.storage.putSession(session) }

            let rejected = try await client.send(
                port: ports.publicPort, path: "/todo/", headers: Fixture.cookieHeader(expired.id))
            #expect(rejected.status == 401)

            let refreshed = try await client.send(
                port: ports.publicPort, path: "/todo/", headers: Fixture.cookieHeader(aging.id))
            #expect(refreshed.status == 200)
            #expect(Fixture.sessionCookie(in: refreshed) == aging.id)
            let stored = try #require(try database.storage.session(id: aging.id))
            #expect(stored.expires.timeIntervalSince(now) > 3500)

            let untouched = try await client.send(
                port: ports.publicPort, path: "/todo/", headers: Fixture.cookieHeader(fresh.id))
            #expect(untouched.status == 200)
            #expect(untouched.header("Set-Cookie") == nil)
        }
    }
}
