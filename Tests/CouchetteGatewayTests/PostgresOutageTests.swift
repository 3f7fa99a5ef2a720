import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - PostgresOutageTests

/// A PostgreSQL server that stops answering, its connections still open (a network partition, a hung server):
/// every wait on it is bounded by `connect_timeout` (issue 49).
@Suite("PostgreSQL outages", .timeLimit(.minutes(3)))
struct PostgresOutageTests {
    @Test("A PostgreSQL that stops answering gets a 503 within connect_timeout while other databases answer; once it answers again writes go on and nothing acknowledged is lost; the server stops promptly with a request stuck on it")
    func aServerThatStopsAnsweringIsBounded() async throws {
        let url = try await PostgresServer.sharedServer().newDatabase()
        let port = try #require(URLComponents(string: url)?.port)
        let proxy = try ChaosProxy(targetPort: port, cutProbability: 0)
        defer { proxy.stop() }
        let timeout = 2.0
        var far = GatewayFixture.guestDatabase("far")
        far.server = try StorageLocation(
            parsing: url.replacingOccurrences(of: ":\(port)/", with: ":\(proxy.port)/") + "?connect_timeout=\(Int(timeout))")
        let config = GatewayFixture.config(databases: [far, GatewayFixture.guestDatabase("near")])
        let server = try await offCooperativeThreads { try GatewayServer(config: config, logger: GatewayFixture.logger) }
        let running = Task { try await server.run() }
        let client = HTTPTestClient()
        defer { client.close() }
        let adminPort = try await withDeadline(.seconds(60), "the gateway starting") {
            try await server.waitUntilReady()
        }.adminPort

        #expect(try await client.send("PUT", port: adminPort, path: "/far/before", json: ["v": 1]).status == 201)
        #expect(try await client.send("PUT", port: adminPort, path: "/near/doc", json: ["v": 1]).status == 201)

        proxy.hold()
        let farDone = DoneFlag()
        let start = ContinuousClock.now
        let stalled = Task {
            defer { farDone.value.store(true, ordering: .releasing) }
            return try await client.send("PUT", port: adminPort, path: "/far/during", json: ["v": 2])
        }
        // The in-memory database answers while the request to the stalled one waits.
        #expect(try await client.send(port: adminPort, path: "/near/doc").status == 200)
        let farEndedFirst = farDone.value.load(ordering: .acquiring)
        #expect(!farEndedFirst, "the request to the stalled database ended before the other")
        let reply = try await stalled.value
        #expect(reply.status == 503, "\(reply.text)")
        #expect(ContinuousClock.now - start < .seconds(3 * timeout + 3))

        proxy.release()
        // Connections that timed out were closed; new ones work at once.
        let after = try await client.send("PUT", port: adminPort, path: "/far/after", json: ["v": 3])
        #expect(after.status == 201, "\(after.text)")
        #expect(try await client.send(port: adminPort, path: "/far/before").status == 200)
        #expect(try await client.send(port: adminPort, path: "/far/after").status == 200)

        // Stopping with a request stuck on the stalled server: the wait ends within the timeout.
        proxy.hold()
        let stuck = Task { try? await client.send("PUT", port: adminPort, path: "/far/stuck", json: ["v": 4]) }
        #expect(try await client.send(port: adminPort, path: "/near/doc").status == 200)
        let stopping = ContinuousClock.now
        await server.triggerGracefulShutdown()
        try await withDeadline(.seconds(3 * timeout + 10), "the gateway stopping") { try await running.value }
        #expect(ContinuousClock.now - stopping < .seconds(3 * timeout + 5))
        _ = await stuck.value
        proxy.release()
    }
}

/// Whether a task has ended, for another to look at.
private final class DoneFlag: Sendable {
    let value = Atomic<Bool>(false)
}
