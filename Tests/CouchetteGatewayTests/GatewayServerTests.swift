import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// MARK: - GatewayServerTests

@Suite("Gateway server over real sockets", .timeLimit(.minutes(5)))
struct GatewayServerTests {
    // MARK: - GET /

    @Test("GET / welcomes on both listeners; only the admin one says ADMIN")
    func welcome() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            #expect(ports.publicPort > 0)
            #expect(ports.adminPort > 0)
            #expect(ports.publicPort != ports.adminPort)

            let publicReply = try await client.send(port: ports.publicPort, path: "/")
            #expect(publicReply.status == 200)
            #expect(publicReply.header("Content-Type") == "application/json")
            let publicBody = try publicReply.json()
            #expect(publicBody["couchdb"] as? String == "Welcome")
            #expect(publicBody["version"] as? String == GatewayVersion.versionString)
            let vendor = try #require(publicBody["vendor"] as? [String: Any])
            #expect(vendor["name"] as? String == "Couchette Sync Gateway")
            #expect(vendor["version"] as? String == "0.1")
            #expect(publicBody["ADMIN"] == nil)

            let adminReply = try await client.send(port: ports.adminPort, path: "/")
            #expect(adminReply.status == 200)
            let adminBody = try adminReply.json()
            #expect(adminBody["couchdb"] as? String == "Welcome")
            #expect(adminBody["ADMIN"] as? Bool == true)
        }
    }

    @Test("Every response carries the Sync Gateway Server header")
    func serverHeader() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            for (port, path) in [
                (ports.publicPort, "/"), (ports.adminPort, "/"), (ports.publicPort, "/todo/"),
                (ports.publicPort, "/nope/"), (ports.adminPort, "/a/b/c/d"),
            ] {
                let reply = try await client.send(port: port, path: path)
                let server = try #require(reply.header("Server"))
                #expect(server.hasPrefix("Couchbase Sync Gateway/1.4.1"))
                #expect(server == GatewayVersion.serverHeader)
            }
        }
    }

    @Test("HEAD / answers 200 without a body")
    func headWelcome() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let reply = try await client.send("HEAD", port: ports.publicPort, path: "/")
            #expect(reply.status == 200)
            #expect(reply.body.isEmpty)
        }
    }

    // MARK: - GET /{db}/

    @Test("GET /todo/ and /todo describe the database on both listeners")
    func databaseInfo() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            var startTimes: Set<Int64> = []
            for port in [ports.publicPort, ports.adminPort] {
                for path in ["/todo/", "/todo"] {
                    let reply = try await client.send(port: port, path: path)
                    #expect(reply.status == 200, "\(path)")
                    #expect(reply.header("Content-Type") == "application/json")
                    let body = try reply.json()
                    #expect(body["db_name"] as? String == "todo")
                    #expect((body["update_seq"] as? NSNumber)?.intValue == 0)
                    #expect((body["committed_update_seq"] as? NSNumber)?.intValue == 0)
                    #expect(body["state"] as? String == "Online")
                    #expect(body["compact_running"] as? Bool == false)
                    #expect((body["purge_seq"] as? NSNumber)?.intValue == 0)
                    #expect((body["disk_format_version"] as? NSNumber)?.intValue == 0)
                    let startTime = try #require((body["instance_start_time"] as? NSNumber)?.int64Value)
                    startTimes.insert(startTime)
                }
            }
            #expect(startTimes.count == 1)
            let startTime = try #require(startTimes.first)
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            #expect(startTime <= now && now - startTime < 600_000_000)
        }
    }

    @Test("HEAD /todo/ answers 200 without a body")
    func headDatabase() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let reply = try await client.send("HEAD", port: ports.adminPort, path: "/todo/")
            #expect(reply.status == 200)
            #expect(reply.body.isEmpty)
        }
    }

    @Test("A database configured offline reports state Offline")
    func offlineDatabase() async throws {
        let config = GatewayFixture.config(databases: [GatewayFixture.guestDatabase(offline: true)])
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let body = try await client.send(port: ports.publicPort, path: "/todo/").json()
            #expect(body["state"] as? String == "Offline")
        }
    }

    // MARK: - Errors

    @Test("An unknown database is a JSON 404 naming it")
    func unknownDatabase() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            for port in [ports.publicPort, ports.adminPort] {
                let reply = try await client.send(port: port, path: "/nope/")
                #expect(reply.status == 404)
                #expect(reply.header("Content-Type") == "application/json")
                let body = try reply.json()
                #expect(body["error"] as? String == "not_found")
                #expect(body["reason"] as? String == #"no such database "nope""#)
            }
        }
    }

    @Test(
        "Unknown paths are a JSON 404 unknown URL",
        arguments: ["/todo/_nonexistent_endpoint/x/y", "/_nonexistent", "/a/b/c/d/e", "/_all_dbs"]
    )
    func unknownURL(path: String) async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let reply = try await client.send(port: ports.publicPort, path: path)
            #expect(reply.status == 404)
            #expect(reply.header("Content-Type") == "application/json")
            let body = try reply.json()
            #expect(body["error"] as? String == "not_found")
            #expect(body["reason"] as? String == "unknown URL")
        }
    }

    @Test("A wrong method on a known path is a JSON 405 with Allow")
    func methodNotAllowed() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let reply = try await client.send("DELETE", port: ports.publicPort, path: "/")
            #expect(reply.status == 405)
            #expect(reply.header("Allow") == "GET, HEAD")
            let body = try reply.json()
            #expect(body["error"] as? String == "Method Not Allowed")
            #expect(body["reason"] != nil)
        }
    }

    @Test("OPTIONS on a known path lists the allowed methods")
    func options() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let reply = try await client.send("OPTIONS", port: ports.publicPort, path: "/todo/")
            #expect(reply.status == 204)
            #expect(reply.header("Allow") == "GET, HEAD, POST, PUT, OPTIONS")
        }
    }

    @Test("Pretty printing follows the config")
    func pretty() async throws {
        var config = GatewayFixture.config()
        config.pretty = true
        try await GatewayFixture.withRunningGateway(config) { client, ports in
            let reply = try await client.send(port: ports.adminPort, path: "/")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("\n"))
        }
    }

    // MARK: - Lifecycle

    @Test("Graceful shutdown makes run return and closes the listeners")
    func gracefulShutdown() async throws {
        // A database name no other test's server has: once this server stops, another test's server may be given
        // the same free port, and must not pass for this one.
        let name = "shut-\(UUID().uuidString.prefix(8).lowercased())"
        let server = try GatewayServer(
            config: GatewayFixture.config(databases: [GatewayFixture.guestDatabase(name)]), logger: GatewayFixture.logger)
        let task = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let client = HTTPTestClient()
        defer { client.close() }
        #expect(try await client.send(port: ports.publicPort, path: "/\(name)/").status == 200)

        await server.triggerGracefulShutdown()
        try await task.value

        // Nothing answers for this server's database any more: the port refuses, or another server answers 404.
        let after = try? await client.send(port: ports.publicPort, path: "/\(name)/")
        #expect(after == nil || after?.status == 404)
        // A server runs once.
        await #expect(throws: GatewayError.self) { try await server.run() }
    }

    @Test("Cancelling the task running the server stops it")
    func cancellation() async throws {
        // A database name no other test's server has: once this server stops, another test's server may be given
        // the same free port, and must not pass for this one.
        let name = "stopped-\(UUID().uuidString.prefix(8).lowercased())"
        let server = try GatewayServer(
            config: GatewayFixture.config(databases: [GatewayFixture.guestDatabase(name)]), logger: GatewayFixture.logger)
        let ready = AsyncStream.makeStream(of: BoundPorts.self)
        let task = Task {
            try await server.run { ports in ready.continuation.yield(ports) }
        }
        var iterator = ready.stream.makeAsyncIterator()
        let ports = try #require(await iterator.next())
        let client = HTTPTestClient()
        defer { client.close() }
        #expect(try await client.send(port: ports.adminPort, path: "/\(name)/").status == 200)

        task.cancel()
        _ = await task.result

        // Nothing answers for this server's database any more: the port refuses, or another server answers 404.
        let after = try? await client.send(port: ports.adminPort, path: "/\(name)/")
        #expect(after == nil || after?.status == 404)
    }

    @Test("A shutdown requested before run is honoured")
    func shutdownBeforeRun() async throws {
        let server = try GatewayServer(config: GatewayFixture.config(), logger: GatewayFixture.logger)
        await server.triggerGracefulShutdown()
        // Not honoured, `run` would serve until cancelled: the deadline turns that into a failure.
        try await withDeadline(.seconds(60), "run after an early shutdown request") { try await server.run() }
        // The server ran (once): it cannot run again.
        await #expect(throws: GatewayError.self) { try await server.run() }
    }

    @Test("A port already in use fails the run and the readiness wait instead of hanging")
    func bindFailure() async throws {
        try await GatewayFixture.withRunningGateway { _, ports in
            var config = GatewayFixture.config()
            config.interface = InterfaceAddress(host: "127.0.0.1", port: ports.publicPort)
            let second = try GatewayServer(config: config, logger: GatewayFixture.logger)
            let waiter = Task { try await second.waitUntilReady() }
            let failure = await #expect(throws: GatewayError.self) { try await second.run() }
            #expect(failure?.field == "interface")
            #expect(failure?.reason.contains("port \(ports.publicPort) is already in use") == true, "\(String(describing: failure))")
            await #expect(throws: GatewayError.self) { _ = try await waiter.value }
        }
    }

    @Test("TLS settings that cannot work are refused with the field named")
    func tlsSettingsChecked() throws {
        var config = GatewayFixture.config()
        config.sslCert = "/tmp/cert.pem"
        #expect(try #require(throws: GatewayError.self) { try GatewayServer(config: config) }.field == "SSLKey")
        config.sslKey = "/nonexistent/key.pem"
        config.sslCert = "/nonexistent/cert.pem"
        #expect(try #require(throws: GatewayError.self) { try GatewayServer(config: config) }.field == "SSLCert")
        config.sslCert = nil
        #expect(try #require(throws: GatewayError.self) { try GatewayServer(config: config) }.field == "SSLCert")
    }
}
