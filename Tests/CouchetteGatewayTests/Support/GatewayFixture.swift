import CouchetteTestSupport
import Foundation
import Logging
import Testing

@testable import CouchetteGateway

// MARK: - GatewayFixture

/// Runs gateways on loopback with system-chosen ports for end-to-end tests.
enum GatewayFixture {
    /// A configuration binding both listeners to `127.0.0.1:0`, with one database per name.
    static func config(databases: [DatabaseConfig] = [GatewayFixture.guestDatabase()]) -> GatewayConfig {
        GatewayConfig(
            interface: InterfaceAddress(host: "127.0.0.1", port: 0),
            adminInterface: InterfaceAddress(host: "127.0.0.1", port: 0),
            databases: Dictionary(uniqueKeysWithValues: databases.map { ($0.name, $0) })
        )
    }

    /// The storage backend the gateway's end-to-end tests put in-memory databases in (`COUCHETTE_TEST_STORAGE`).
    static let storageBackend =
        StorageBackend(rawValue: ProcessInfo.processInfo.environment["COUCHETTE_TEST_STORAGE"] ?? "") ?? .sqlite

    /// `database` moved to a new database of ``storageBackend`` when it is in memory: each server
    /// ``withRunningGateway(_:_:)`` starts then has empty databases in PostgreSQL when `COUCHETTE_TEST_STORAGE=postgres`
    /// (`make test-postgres` runs the gateway's end-to-end tests so).
    static func onTestStorage(_ databases: [String: DatabaseConfig]) async -> [String: DatabaseConfig] {
        guard storageBackend != .sqlite else { return databases }
        var moved = databases
        for (name, database) in databases where database.server == .memory {
            do { moved[name]?.server = try await storageBackend.newLocation() } catch {
                Issue.record("No \(storageBackend) storage for the test: \(error)")
            }
        }
        return moved
    }

    /// An in-memory database whose `GUEST` user is enabled and reads every channel.
    static func guestDatabase(_ name: String = "todo", offline: Bool = false) -> DatabaseConfig {
        DatabaseConfig(
            name: name, users: ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])], offline: offline)
    }

    /// A quiet logger for test servers.
    static var logger: Logger {
        var logger = Logger(label: "couchette.gateway.tests")
        logger.logLevel = .critical
        return logger
    }

    /// Starts a server, waits until both listeners are bound (no sleeping), runs `body` with a client and the ports,
    /// then shuts the server down gracefully and checks that `run` returned without error.
    static func withRunningGateway(
        _ config: GatewayConfig = GatewayFixture.config(),
        _ body: (HTTPTestClient, BoundPorts) async throws -> Void
    ) async throws {
        var config = config
        config.databases = await onTestStorage(config.databases)
        try await withRunning(try GatewayServer(config: config, logger: logger), body)
    }

    /// Runs `server`, waits until both listeners are bound, runs `body` with a client and the ports, then shuts
    /// the server down gracefully and checks that `run` returned without error.
    ///
    /// Starting and stopping each have a deadline (a server that never binds or never stops fails the test);
    /// the client's requests time out on their own, and the suite's time limit bounds the rest.
    static func withRunning(
        _ server: GatewayServer, _ body: (HTTPTestClient, BoundPorts) async throws -> Void
    ) async throws {
        let task = Task { try await server.run() }
        let client = HTTPTestClient()
        defer { client.close() }
        do {
            let ports = try await withDeadline(.seconds(60), "the gateway starting") {
                try await server.waitUntilReady()
            }
            try await body(client, ports)
        } catch {
            client.close()
            await server.triggerGracefulShutdown()
            _ = try? await withDeadline(.seconds(60), "the gateway stopping") { await task.result }
            task.cancel()
            throw error
        }
        // The client's pooled connections go first: one opened and never used would hold the server's graceful
        // shutdown until the client's pool dropped it (60 s).
        client.close()
        await server.triggerGracefulShutdown()
        try await withDeadline(.seconds(60), "the gateway stopping") { try await task.value }
    }
}
