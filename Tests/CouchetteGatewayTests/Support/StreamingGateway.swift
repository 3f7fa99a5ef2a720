import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - StreamingGateway

/// Runs a gateway for `_changes` tests: like ``GatewayFixture/withRunningGateway(_:_:)``, but the body also gets
/// the server (its registry, to take databases offline or watch feeds wait; its shutdown) and heartbeats may be
/// shorter than the 25 s floor.
enum StreamingGateway {
    /// Starts a server with the heartbeat floor lowered to `minimumHeartbeat`, runs `body`, then shuts the server
    /// down gracefully (if the body did not already) and checks that `run` returned without error, all within 60 s.
    static func run(
        _ config: GatewayConfig = GatewayFixture.config(),
        minimumHeartbeat: Duration = .milliseconds(50),
        _ body: @escaping @Sendable (GatewayServer, HTTPTestClient, BoundPorts) async throws -> Void
    ) async throws {
        try await run(
            try GatewayServer(config: config, logger: GatewayFixture.logger), minimumHeartbeat: minimumHeartbeat,
            body)
    }

    /// Runs `server` as ``run(_:minimumHeartbeat:_:)`` does, within `deadline`.
    static func run(
        _ server: GatewayServer,
        minimumHeartbeat: Duration = .milliseconds(50),
        deadline: Duration = .seconds(60),
        _ body: @escaping @Sendable (GatewayServer, HTTPTestClient, BoundPorts) async throws -> Void
    ) async throws {
        let task = ChangesFeedSettings.$minimumHeartbeat.withValue(minimumHeartbeat) {
            Task { try await server.run() }
        }
        let client = HTTPTestClient()
        defer { client.close() }
        do {
            // The deadline covers the shutdown too: a feed that kept the server from stopping fails the test.
            try await withDeadline(deadline, "the gateway test and its shutdown") {
                let ports = try await server.waitUntilReady()
                try await body(server, client, ports)
                // The client's pooled connections go first: one opened and never used would hold the server's graceful
                // shutdown until the client's pool dropped it (60 s), a hang that is not the server's doing.
                client.close()
                await server.triggerGracefulShutdown()
                try await task.value
            }
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
    }

    /// The database `name` of a running server.
    static func database(_ server: GatewayServer, _ name: String = "todo") async throws -> GatewayDatabase {
        try #require(await server.registry.database(named: name))
    }
}
