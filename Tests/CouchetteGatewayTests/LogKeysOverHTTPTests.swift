import Foundation
import Logging
import Synchronization
import Testing

@testable import CouchetteGateway

// MARK: - LogKeysOverHTTPTests

/// Log lines follow the configured keys, change with `PUT /_logging`, and never carry secrets.
@Suite("Log keys over HTTP", .timeLimit(.minutes(5)))
struct LogKeysOverHTTPTests {
    @Test("CRUD and Auth lines follow the keys; HTTP lines start when _logging enables them; no password is logged")
    func categories() async throws {
        var config = GatewayFixture.config(databases: [
            DatabaseConfig(name: "db", users: ["alice": UserConfig(name: "alice", password: "s3cret-pw", adminChannels: ["*"])])
        ])
        config.log = ["CRUD", "Auth"]
        let lines = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        let server = try GatewayServer(config: config, logger: logger)
        let task = Task { try await server.run() }
        let client = HTTPTestClient()
        defer { client.close() }
        let ports = try await server.waitUntilReady()

        _ = try await client.send("PUT", port: ports.publicPort, path: "/db/doc1", json: ["v": 1], user: ("alice", "s3cret-pw"))
        _ = try await client.send(port: ports.publicPort, path: "/db/doc1", user: ("alice", "wrong-pw"))
        #expect(lines.contains { $0.hasPrefix("CRUD: Stored doc \"doc1\" / \"1-") })
        #expect(lines.contains { $0 == "Auth: User \"alice\" authenticated by password on db \"db\"" })
        #expect(lines.contains { $0 == "Auth: Invalid login for user \"alice\" on db \"db\"" })
        #expect(!lines.contains { $0.hasPrefix("HTTP:") })

        let enable = try await client.send("PUT", port: ports.adminPort, path: "/_logging", json: ["HTTP": true, "CRUD": false])
        #expect(enable.status == 200)
        _ = try await client.send("PUT", port: ports.adminPort, path: "/db/doc2", json: ["v": 2])
        #expect(lines.contains { $0.hasPrefix("HTTP: PUT /db/doc2 -> 201") })
        #expect(!lines.contains { $0.hasPrefix("CRUD: Stored doc \"doc2\"") })
        #expect(!lines.contains { $0.contains("s3cret-pw") || $0.contains("wrong-pw") })

        await server.triggerGracefulShutdown()
        try await task.value
    }
}

// MARK: - Capturing

/// Lines logged so far.
final class CapturedLines: Sendable {
    private let lines = Mutex<[(level: Logger.Level, text: String)]>([])

    func append(_ line: String, level: Logger.Level = .info) { lines.withLock { $0.append((level, line)) } }

    func contains(where predicate: (String) -> Bool) -> Bool {
        lines.withLock { $0.contains { predicate($0.text) } }
    }

    /// The lines logged at `level` or above.
    func lines(atLeast level: Logger.Level) -> [String] {
        lines.withLock { $0.filter { $0.level >= level }.map(\.text) }
    }
}

/// A swift-log handler keeping every message (with its metadata) in memory.
struct CapturingLogHandler: LogHandler {
    let lines: CapturedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        let extra = (metadata ?? [:]).map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        lines.append(extra.isEmpty ? message.description : "\(message.description) \(extra)", level: level)
    }
}
