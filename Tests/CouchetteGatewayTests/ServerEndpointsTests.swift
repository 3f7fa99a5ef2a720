import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ServerEndpointsTests

/// The admin port's server-level endpoints (gateway-rest-api.md §3): `_all_dbs`, `_config`, `_status`,
/// `_logging`.
@Suite("Server endpoints over HTTP", .timeLimit(.minutes(5)))
struct ServerEndpointsTests {
    typealias Fixture = AdminGatewayFixture

    @Test("_all_dbs, _status and _config answer on the admin port only")
    func adminOnly() async throws {
        try await Fixture.run { client, ports, _ in
            // (A statement with `try` outside a macro, so that the closure is inferred as throwing.)
            for path in ["/_all_dbs", "/_config", "/_status", "/_expvar", "/metrics", "/_logging"] {
                #expect(try await client.send(port: ports.adminPort, path: path).status == 200, "\(path)")
                #expect(try await client.send(port: ports.publicPort, path: path).status == 404, "\(path)")
            }
            let names = try await client.send(port: ports.adminPort, path: "/_all_dbs").jsonValue()
            #expect(names == ["todo"])
        }
    }

    @Test("Each port serves its OpenAPI description as YAML, the files of openapi/")
    func openAPIDescriptions() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("openapi")
            for (port, name) in [(ports.publicPort, "public.yaml"), (ports.adminPort, "admin.yaml")] {
                let reply = try await client.send(port: port, path: "/_openapi/\(name)")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type") == "application/yaml")
                #expect(reply.text.hasPrefix("openapi: 3.1"))
                #expect(reply.body == (try Data(contentsOf: repository.appendingPathComponent(name))))
            }
            #expect(try await client.send(port: ports.publicPort, path: "/_openapi/admin.yaml").status == 404)
        }
    }

    @Test("_status reports each database's sequence, UUID and state")
    func status() async throws {
        try await Fixture.run { client, ports, _ in
            #expect(try await client.send("PUT", port: ports.adminPort, path: "/todo/doc", json: [:]).status == 201)
            #expect(try await client.send("POST", port: ports.adminPort, path: "/todo/_offline").status == 200)
            let status = try await client.send(port: ports.adminPort, path: "/_status").jsonValue()
            let todo = try #require(status["databases"]?["todo"])
            #expect(todo["seq"] == 1)
            #expect(todo["state"] == "Offline")
            #expect(todo["server_uuid"]?.stringValue?.count == 32)
            #expect(status["active_tasks"] == [])
            #expect(status["version"] == .string(GatewayVersion.versionString))
            #expect(status["vendor"]?["name"] == .string(GatewayVersion.productName))
            let again = try await client.send(port: ports.adminPort, path: "/_status").jsonValue()
            #expect(again["databases"]?["todo"]?["server_uuid"] == todo["server_uuid"])
        }
    }

    @Test("_config shows the server configuration and run-time databases without secrets")
    func config() async throws {
        var config = Fixture.config()
        config.databases["todo"]?.users["user1"] = UserConfig(name: "user1", password: "s3cret-pass")
        config.adminCredentials = BasicCredentials(username: "admin", password: "admin-s3cret")
        config.log = ["HTTP"]
        config.cors = CORSConfig(origins: ["*"], loginOrigins: ["http://a.example"])
        try await Fixture.run(config) { client, ports, _ in
            let auth = ("admin", "admin-s3cret")
            #expect(
                try await client.send("PUT", port: ports.adminPort, path: "/extra/", json: [:], user: auth).status
                    == 201)
            let reply = try await client.send(port: ports.adminPort, path: "/_config", user: auth)
            #expect(reply.status == 200)
            #expect(!reply.text.contains("s3cret"))
            let json = try reply.jsonValue()
            #expect(json["interface"] == "127.0.0.1:0")
            #expect(json["adminInterface"] == "127.0.0.1:0")
            #expect(json["adminUsername"] == "admin")
            #expect(json["adminPassword"] == nil)
            #expect(json["log"] == ["HTTP"])
            #expect(json["CORS"]?["loginOrigin"] == ["http://a.example"])
            #expect(json["databases"]?["todo"]?["users"]?["user1"] != nil)
            #expect(json["databases"]?["extra"]?["server"] == "walrus:")
            // Storage that cannot be opened where `server` points is the request's fault: 400 naming the field.
            for server in ["walrus:/proc/no-such-place", "sqlite:/proc/no-such-place/x.sqlite3"] {
                let reply = try await client.send(
                    "PUT", port: ports.adminPort, path: "/unusable/", json: ["server": .string(server)], user: auth)
                #expect(reply.status == 400, "\(server): \(reply.text)")
                #expect(reply.text.contains("server"))
            }
        }
    }

    @Test("_logging shows and changes log keys and the level at run time")
    func logging() async throws {
        var config = Fixture.config()
        config.log = ["HTTP"]
        try await Fixture.run(config) { client, ports, registry in
            let admin = ports.adminPort
            #expect(try await client.send(port: admin, path: "/_logging").jsonValue() == ["HTTP": true])

            #expect(
                try await client.send("PUT", port: admin, path: "/_logging", json: ["CRUD": true, "http": false])
                    .status == 200)
            #expect(try await client.send(port: admin, path: "/_logging").jsonValue() == ["CRUD": true])
            #expect(!registry.logSettings.isEnabled(LogKeys.http))
            #expect(registry.logSettings.isEnabled(LogKeys.crud))

            #expect(
                try await client.send("PUT", port: admin, path: "/_logging?replace=true", json: ["Auth": true])
                    .status == 200)
            #expect(try await client.send(port: admin, path: "/_logging").jsonValue() == ["Auth": true])

            #expect(try await client.send("PUT", port: admin, path: "/_logging?level=3").status == 200)
            #expect(registry.logSettings.level == .warning)
            #expect(try await client.send("PUT", port: admin, path: "/_logging?logLevel=debug").status == 200)
            let shown = try await client.send(port: admin, path: "/_config").jsonValue()
            #expect(shown["log"] == ["Auth"])
            #expect(shown["logging"]?["default"]?["logLevel"] == "debug")

            #expect(try await client.send("PUT", port: admin, path: "/_logging", json: ["HTTP": "yes"]).status == 400)
            #expect(try await client.send("PUT", port: admin, path: "/_logging?level=9").status == 400)
            #expect(try await client.send("PUT", port: admin, path: "/_logging").status == 400)
        }
    }

    @Test("Log settings: keys are case-insensitive, replace starts from none, level names map to swift-log")
    func logSettings() {
        let settings = LogSettings(keys: ["HTTP", "http", "Changes+"], level: .info)
        #expect(settings.keyNames == ["HTTP", "Changes+"])
        #expect(settings.isEnabled("changes"))
        settings.update(["HTTP": false, "Auth": true], replace: false)
        #expect(settings.keyNames == ["Changes+", "Auth"])
        settings.update(["CRUD": true, "Auth": false], replace: true)
        #expect(settings.keyNames == ["CRUD"])
        #expect(LogSettings.level(named: "WARN") == .warning)
        #expect(LogSettings.level(named: "bogus") == nil)
        #expect(LogSettings.level(number: 1) == .debug)
        #expect(LogSettings.name(of: .warning) == "warn")
        let fromConfig = LogSettings(
            config: GatewayConfig(log: ["HTTP"], logging: LoggingConfig(logKeys: ["CRUD"], logLevel: "error")))
        #expect(fromConfig.keyNames == ["HTTP", "CRUD"])
        #expect(fromConfig.level == .error)
    }
}
