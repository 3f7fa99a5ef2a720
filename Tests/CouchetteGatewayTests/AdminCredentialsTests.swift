import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AdminCredentialsTests

/// `adminUsername`/`adminPassword`: every admin-port request must carry them as Basic credentials.
@Suite("Admin credentials", .timeLimit(.minutes(5)))
struct AdminCredentialsTests {
    @Test("Without matching credentials the admin port answers 401 with WWW-Authenticate; the public port is open")
    func required() async throws {
        var config = AdminGatewayFixture.config(guest: true)
        config.adminCredentials = BasicCredentials(username: "admin", password: "letmein")
        try await AdminGatewayFixture.run(config) { client, ports, _ in
            let admin = ports.adminPort
            for (user, reason) in [
                (nil, "Login required"), (("admin", "wrong"), "Invalid login"),
                (("Admin", "letmein"), "Invalid login"), (("user1", "letmein"), "Invalid login"),
            ]
                as [((String, String)?, String)]
            {
                for path in ["/", "/_all_dbs", "/todo/_user/"] {
                    let reply = try await client.send(port: admin, path: path, user: user)
                    #expect(reply.status == 401, "\(path) \(String(describing: user))")
                    #expect(reply.header("WWW-Authenticate") == #"Basic realm="Couchbase Sync Gateway""#)
                    #expect(try reply.jsonValue()["reason"] == .string(reason))
                }
            }
            let put = try await client.send("PUT", port: admin, path: "/todo/_user/u", json: ["password": "pwd"])
            #expect(put.status == 401)
            #expect(try await client.send(port: admin, path: "/_all_dbs", user: ("admin", "letmein")).status == 200)
            #expect(
                try await client.send(
                    "PUT", port: admin, path: "/todo/_user/u", json: ["password": "pwd"], user: ("admin", "letmein")
                ).status == 201)
            #expect(try await client.send(port: ports.publicPort, path: "/todo/").status == 200)
        }
    }

    @Test("Credentials match only when both name and password are equal")
    func matching() {
        let expected = BasicCredentials(username: "admin", password: "pw")
        #expect(AdminCredentialsMiddleware.matches(BasicCredentials(username: "admin", password: "pw"), expected))
        #expect(!AdminCredentialsMiddleware.matches(BasicCredentials(username: "admin", password: "pw2"), expected))
        #expect(!AdminCredentialsMiddleware.matches(BasicCredentials(username: "admin2", password: "pw"), expected))
        #expect(!AdminCredentialsMiddleware.matches(BasicCredentials(username: "", password: ""), expected))
    }
}
