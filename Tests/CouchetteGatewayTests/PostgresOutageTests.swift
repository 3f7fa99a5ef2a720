import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteBLIP
@testable import CouchetteGateway

// MARK: - PostgresOutageTests

/// A PostgreSQL server that stops answering, its connections still open (a network partition, a hung server):
/// every wait on it is bounded by `connect_timeout` (issue 49).
@Suite("PostgreSQL outages", .timeLimit(.minutes(3)))
struct PostgresOutageTests {
    @Test("A PostgreSQL that stops answering gets a 503 within connect_timeout while other databases answer; once it answers again writes go on and nothing acknowledged is lost; the server stops promptly with a request stuck on it")
    func aServerThatStopsAnsweringIsBounded() async throws {
        let timeout = 2.0
        let (proxy, server, running, ports) = try await startGateway(timeout: timeout)
        defer { proxy.stop() }
        let client = HTTPTestClient()
        defer { client.close() }
        let adminPort = ports.adminPort

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

extension PostgresOutageTests {
    @Test("BLIP requests waiting on a stalled PostgreSQL hold none of Swift's cooperative threads: an in-memory database answers meanwhile")
    func blipRequestsOnAStalledDatabaseLeaveTheCooperativeThreads() async throws {
        let (proxy, server, running, ports) = try await startGateway(timeout: 10, far: "far-blip")
        defer { proxy.stop() }
        let client = HTTPTestClient()
        defer { client.close() }
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/near/doc", json: ["v": 1]).status == 201)
        // More requests than cooperative threads, each waiting on its own PostgreSQL connection.
        let stalled = min(ProcessInfo.processInfo.activeProcessorCount + 2, 20)
        let answered = DoneFlag()
        try await BLIPTestClient.run(port: ports.publicPort, database: "far-blip") { connection in
            // The session works while PostgreSQL answers.
            let first = try await connection.send(properties: ["Profile": "getCheckpoint", "client": "warm"])
            #expect(first.properties["Error-Code"] == "404")
            proxy.hold()
            let requests = Task {
                try await withThrowingTaskGroup(of: BLIPMessage.self) { group in
                    for index in 0..<stalled {
                        group.addTask {
                            try await connection.send(properties: ["Profile": "getCheckpoint", "client": "c\(index)"])
                        }
                    }
                    defer { answered.value.store(true, ordering: .releasing) }
                    return try await group.reduce(into: [BLIPMessage]()) { $0.append($1) }
                }
            }
            try await offCooperativeThreads { proxy.waitUntilHolding(stalled) }
            // Every handler waits on PostgreSQL now; the in-memory database answers all the same.
            #expect(try await client.send(port: ports.adminPort, path: "/near/doc").status == 200)
            let answeredFirst = answered.value.load(ordering: .acquiring)
            #expect(!answeredFirst, "the stalled requests ended before the other")
            proxy.release()
            let replies = try await requests.value
            #expect(replies.count == stalled)
        }
        await server.triggerGracefulShutdown()
        try await running.value
    }

    @Test("A PostgreSQL database that stops answering uses up only its own threads: another PostgreSQL database answers while more requests than the shared threads wait on the first")
    func aStalledDatabaseUsesUpOnlyItsOwnThreads() async throws {
        var other = GatewayFixture.guestDatabase("other")
        other.server = try StorageLocation(parsing: try await PostgresServer.sharedServer().newDatabase())
        let (proxy, server, running, ports) = try await startGateway(timeout: 10, far: "far-threads", more: [other])
        defer { proxy.stop() }
        let stuckCount = StorageThreads.shared.limit + 8
        let client = HTTPTestClient(connections: stuckCount + 8)
        defer { client.close() }
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/other/doc", json: ["v": 1]).status == 201)
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/far-threads/before", json: ["v": 1]).status == 201)

        proxy.hold()
        let answered = DoneFlag()
        let stuck = Task {
            await withTaskGroup(of: Void.self) { group in
                // An admin's read of a role is made in place, blocking its thread (the requests a sync client makes
                // await PostgreSQL holding none).
                for index in 0..<stuckCount {
                    group.addTask {
                        _ = try? await client.send(port: ports.adminPort, path: "/far-threads/_role/stuck-\(index)")
                    }
                }
                await group.waitForAll()
            }
            answered.value.store(true, ordering: .releasing)
        }
        // Every thread of `far` waits on its server (or for one of its connections).
        let farThreads = try #require(await server.registry.database(named: "far-threads")?.executor)
        #expect(try await offCooperativeThreads { farThreads.waitUntilRunning(farThreads.limit) })
        #expect(try await client.send(port: ports.adminPort, path: "/other/doc").status == 200)
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/other/doc2", json: ["v": 2]).status == 201)
        let answeredFirst = answered.value.load(ordering: .acquiring)
        #expect(!answeredFirst, "the stalled requests ended before the others")
        proxy.release()
        await stuck.value
        await server.triggerGracefulShutdown()
        try await running.value
    }

    @Test("Reads, feeds and writes waiting on a stalled PostgreSQL hold no thread: 40 GETs, _changes, PUTs, _bulk_docs and checkpoints wait on a database of 2 connections while none of its threads runs")
    func waitingRequestsHoldNoThread() async throws {
        // A timeout well past the test's own waits: the held statements must not time out before the release.
        let (proxy, server, running, ports) = try await startGateway(
            timeout: 60, far: "far-waiting", connections: 2)
        defer { proxy.stop() }
        let count = 40
        let client = HTTPTestClient(connections: count + 4)
        defer { client.close() }
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/far-waiting/doc", json: ["v": 1]).status == 201)
        let statuses = try await Self.stall(
            "far-waiting", of: server, through: proxy, requests: count, nearPort: ports.adminPort
        ) { index in
            let reply: HTTPTestClient.Reply?
            switch index % 5 {
            case 0: reply = try? await client.send(port: ports.adminPort, path: "/far-waiting/doc")
            case 4:
                reply = try? await client.send(
                    "PUT", port: ports.adminPort, path: "/far-waiting/_local/checkpoint-\(index)", json: ["seq": 1])
            case 1:
                reply = try? await client.send(
                    "PUT", port: ports.adminPort, path: "/far-waiting/put-\(index)", json: ["v": 2])
            case 2:
                reply = try? await client.send(
                    port: ports.adminPort, path: "/far-waiting/_changes?include_docs=true&style=all_docs")
            default:
                reply = try? await client.send(
                    "POST", port: ports.adminPort, path: "/far-waiting/_bulk_docs",
                    json: ["docs": [["_id": .string("bulk-\(index)")]]])
            }
            return reply?.status ?? 0
        }
        #expect(statuses.sorted() == Array(repeating: 200, count: 16) + Array(repeating: 201, count: 24), "\(statuses)")
        await server.triggerGracefulShutdown()
        try await running.value
    }

    @Test("Users' requests waiting on a stalled PostgreSQL hold no thread: their user, roles and session are awaited like their documents, and so is a feed's record of the channels it serves")
    func usersRequestsHoldNoThread() async throws {
        let (proxy, server, running, ports) = try await startGateway(
            timeout: 60, far: "far-users", connections: 2)
        defer { proxy.stop() }
        let count = 21
        let client = HTTPTestClient(connections: count + 4)
        defer { client.close() }
        let (admin, port) = (ports.adminPort, ports.publicPort)
        #expect(try await client.send("PUT", port: admin, path: "/far-users/_role/r", json: ["admin_channels": ["c"]]).status == 201)
        #expect(
            try await client.send(
                "PUT", port: admin, path: "/far-users/_user/ann", json: ["password": "secret", "admin_roles": ["r"]]
            ).status == 201)
        #expect(try await client.send("PUT", port: admin, path: "/far-users/doc", json: ["channels": ["c"]]).status == 201)
        // The password checked once (later checks find it verified), and a session.
        #expect(try await client.send(port: port, path: "/far-users/doc", user: ("ann", "secret")).status == 200)
        let login = try await client.send("POST", port: port, path: "/far-users/_session", json: [:], user: ("ann", "secret"))
        let cookie = try #require(login.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let statuses = try await Self.stall(
            "far-users", of: server, through: proxy, requests: count, nearPort: admin
        ) { index in
            let reply: HTTPTestClient.Reply? =
                switch index % 3 {
                case 0: try? await client.send(port: port, path: "/far-users/doc", user: ("ann", "secret"))
                case 1: try? await client.send(port: port, path: "/far-users/doc", headers: ["Cookie": cookie])
                default:
                    // A feed noting the channels it serves, for revocations (as Couchbase Lite 3's pulls do).
                    try? await client.send(port: port, path: "/far-users/_changes?revocations=true", headers: ["Cookie": cookie])
                }
            return reply?.status ?? 0
        }
        #expect(statuses == Array(repeating: 200, count: count))
        await server.triggerGracefulShutdown()
        try await running.value
    }

    @Test("Threads blocked waiting for a connection that suspended tasks hold do not stop those tasks: more blocking requests than the database's threads all finish once PostgreSQL answers")
    func blockedThreadsDoNotStarveTheTasksHoldingConnections() async throws {
        let (proxy, server, running, ports) = try await startGateway(
            timeout: 60, far: "far-blocked", connections: 2)
        defer { proxy.stop() }
        let client = HTTPTestClient(connections: 24)
        defer { client.close() }
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/far-blocked/doc", json: ["v": 1]).status == 201)
        let database = try #require(await server.registry.database(named: "far-blocked"))
        let pool = try #require((database.storage as? PostgresGatewayStorage)?.pool)
        let threads = try #require(database.executor)

        proxy.hold()
        // Two GETs take the two connections and wait, suspended, for PostgreSQL's answers.
        let reads = (0..<2).map { _ in
            Task { try await client.send(port: ports.adminPort, path: "/far-blocked/doc").status }
        }
        try await offCooperativeThreads { proxy.waitUntilHolding(2) }
        // More requests that wait for a connection blocking their thread (an admin's read of a role is made in place)
        // than the database has threads.
        let blockingCount = threads.limit + 2
        let locals = (0..<blockingCount).map { index in
            Task { try await client.send(port: ports.adminPort, path: "/far-blocked/_role/d\(index)").status }
        }
        #expect(try await offCooperativeThreads { pool.waitUntilTasksWait(blockingCount, within: .seconds(30)) })
        let released = ContinuousClock.now
        proxy.release()
        for read in reads { #expect(try await read.value == 200) }
        for local in locals { #expect(try await local.value == 404) }
        #expect(ContinuousClock.now - released < .seconds(30), "the requests waited for the connection timeout")
        await server.triggerGracefulShutdown()
        try await running.value
    }

    @Test("A PostgreSQL database made after the start runs its requests on threads of its own: stalled, it holds none of Swift's cooperative threads, and an in-memory database answers meanwhile; deleted, it is served no more")
    func aDatabaseMadeAfterTheStartGetsItsOwnThreads() async throws {
        let config = GatewayFixture.config(databases: [GatewayFixture.guestDatabase("near")])
        let server = try await offCooperativeThreads { try GatewayServer(config: config, logger: GatewayFixture.logger) }
        let running = Task { try await server.run() }
        let ports = try await withDeadline(.seconds(60), "the gateway starting") { try await server.waitUntilReady() }
        let url = try await PostgresServer.sharedServer().newDatabase()
        let port = try #require(URLComponents(string: url)?.port)
        let proxy = try ChaosProxy(targetPort: port, cutProbability: 0)
        defer { proxy.stop() }
        let stalled = min(ProcessInfo.processInfo.activeProcessorCount + 2, 20)
        let client = HTTPTestClient(connections: stalled + 4)
        defer { client.close() }
        let proxied = url.replacingOccurrences(of: ":\(port)/", with: ":\(proxy.port)/") + "?connect_timeout=10"
        let created = try await client.send(
            "PUT", port: ports.adminPort, path: "/late/",
            json: ["server": .string(proxied), "users": ["GUEST": ["admin_channels": ["*"]]]])
        #expect(created.status == 201, "\(created.text)")
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/near/doc", json: ["v": 1]).status == 201)
        #expect(try await client.send("PUT", port: ports.adminPort, path: "/late/doc", json: ["v": 1]).status == 201)

        proxy.hold()
        let answered = DoneFlag()
        let requests = Task {
            await withTaskGroup(of: Void.self) { group in
                // An admin's read of a role is made in place, blocking its thread.
                for index in 0..<stalled {
                    group.addTask {
                        _ = try? await client.send(port: ports.adminPort, path: "/late/_role/stuck-\(index)")
                    }
                }
                await group.waitForAll()
            }
            answered.value.store(true, ordering: .releasing)
        }
        // More requests than cooperative threads wait on the stalled server; the in-memory database answers.
        try await offCooperativeThreads { proxy.waitUntilHolding(stalled) }
        #expect(try await client.send(port: ports.adminPort, path: "/near/doc").status == 200)
        let answeredFirst = answered.value.load(ordering: .acquiring)
        #expect(!answeredFirst, "the stalled requests ended before the other")
        proxy.release()
        await requests.value

        #expect(try await client.send("DELETE", port: ports.adminPort, path: "/late/").status == 200)
        #expect(try await client.send(port: ports.adminPort, path: "/late/doc").status == 404)
        await server.triggerGracefulShutdown()
        try await running.value
    }

    /// A gateway with an in-memory database `near`, a PostgreSQL one named `far` reached through a proxy, whose waits
    /// are bounded by `timeout` seconds, and `more`; all let GUEST in. Tests run in parallel and a remote database's
    /// threads are the process's, by name: each test names its stalled database its own way.
    /// Stalls `database`'s PostgreSQL (`proxy` holds every statement) while `requests` requests (`send(index)`,
    /// returning a status) wait on it, checks that all but the two holding its connections wait in its pool as
    /// tasks and that none of its threads runs, that the in-memory database `near` answers meanwhile, then lets
    /// PostgreSQL answer and returns the statuses in order.
    private static func stall(
        _ database: String, of server: GatewayServer, through proxy: ChaosProxy, requests count: Int, nearPort: Int,
        _ send: @escaping @Sendable (Int) async -> Int
    ) async throws -> [Int] {
        let stalled = try #require(await server.registry.database(named: database))
        let pool = try #require((stalled.storage as? PostgresGatewayStorage)?.pool)
        let threads = try #require(stalled.executor)
        proxy.hold()
        let requests = Task {
            await withTaskGroup(of: (Int, Int).self) { group in
                for index in 0..<count { group.addTask { (index, await send(index)) } }
                return await group.reduce(into: [Int](repeating: 0, count: count)) { $0[$1.0] = $1.1 }
            }
        }
        // Two statements held on the two connections; every other request waits for a connection.
        let waiting = try await offCooperativeThreads {
            proxy.waitUntilHolding(2)
            return pool.waitUntilTasksWait(count - 2, within: .seconds(10))
        }
        #expect(waiting, "requests waiting for a connection are not tasks suspended in the pool")
        // A job suspended at an `await` ends its turn on its thread; one blocked on the stalled server never would.
        let noneRunning = try await offCooperativeThreads { threads.waitUntilNoneRunning(within: .seconds(5)) }
        #expect(noneRunning, "requests waiting on PostgreSQL hold storage threads")
        let client = HTTPTestClient()
        defer { client.close() }
        #expect(try await client.send(port: nearPort, path: "/near/doc").status == 404)
        proxy.release()
        return await requests.value
    }

    private func startGateway(
        timeout: Double, far name: String = "far", connections: Int? = nil, more: [DatabaseConfig] = []
    ) async throws
        -> (ChaosProxy, GatewayServer, Task<Void, any Error>, BoundPorts)
    {
        let url = try await PostgresServer.sharedServer().newDatabase()
        let port = try #require(URLComponents(string: url)?.port)
        let proxy = try ChaosProxy(targetPort: port, cutProbability: 0)
        var far = GatewayFixture.guestDatabase(name)
        far.server = try StorageLocation(
            parsing: url.replacingOccurrences(of: ":\(port)/", with: ":\(proxy.port)/") + "?connect_timeout=\(Int(timeout))"
                + (connections.map { "&pool_max_conns=\($0)" } ?? ""))
        let config = GatewayFixture.config(databases: [far, GatewayFixture.guestDatabase("near")] + more)
        let server = try await offCooperativeThreads { try GatewayServer(config: config, logger: GatewayFixture.logger) }
        let running = Task { try await server.run() }
        let ports = try await withDeadline(.seconds(60), "the gateway starting") { try await server.waitUntilReady() }
        return (proxy, server, running, ports)
    }
}

/// Whether a task has ended, for another to look at.
private final class DoneFlag: Sendable {
    let value = Atomic<Bool>(false)
}
