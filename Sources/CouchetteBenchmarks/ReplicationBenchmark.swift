import AsyncHTTPClient
import Couchette
import CouchetteCore
import CouchetteGateway
import Foundation
import NIOCore
import NIOHTTP1

/// The replicator against a gateway on loopback: push `count` documents from a Lite database to an empty gateway
/// database, then pull them into an empty Lite database, each against the gateway's own `_bulk_docs` ingest of the
/// same documents in batches of the replicator's size from one client (`replication.push`, `replication.pull`,
/// goal ≥ 0.5 each).
struct ReplicationBenchmark {
    let count: Int
    let batchSize = 200

    func run() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-repl-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# replication: \(count) documents, batches of \(batchSize)")
        let guest = ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])]
        let config = Benchmark.loopbackGateway([
            DatabaseConfig(name: "baseline", server: .directory(directory), users: guest),
            DatabaseConfig(name: "replicated", server: .directory(directory), users: guest),
        ])
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let base = "http://127.0.0.1:\(ports.publicPort)"

        let documents: [(id: String, properties: [String: Any])] = (0..<count).map { index in
            (
                "user1.\(UUID().uuidString)",
                [
                    "type": "task", "title": "Task \(index): " + String(repeating: "x", count: 40 + index % 80),
                    "priority": index % 5, "complete": index % 2 == 0,
                ]
            )
        }
        let bodies: [JSONValue] = try documents.map { document in
            var body = try JSONValue(foundationObject: document.properties).objectValue ?? [:]
            body["_id"] = .string(document.id)
            return .object(body)
        }
        let baseline = try await bulkDocs(bodies, url: "\(base)/baseline/_bulk_docs")

        let source = try openDatabase("source", in: directory)
        let target = try openDatabase("target", in: directory)
        defer {
            try? source.close()
            try? target.close()
        }
        let collection = try source.defaultCollection()
        for first in stride(from: 0, to: count, by: 1_000) {
            try source.inBatch {
                for document in documents[first..<min(first + 1_000, count)] {
                    _ = try collection.putProperties(document.properties, documentID: document.id)
                }
            }
        }
        let (push, pushMemory) = try await PeakMemory.rise {
            try await replicate(source, .push, url: "\(base)/replicated")
        }
        Benchmark.report("replication.push", baselineSeconds: baseline, measuredSeconds: push, goal: ">=0.5")
        print("# replication.push: \(Int(Double(count) / push)) documents/s")
        reportMemory("replication.push.memory.peak", pushMemory)
        let (pull, pullMemory) = try await PeakMemory.rise {
            try await replicate(target, .pull, url: "\(base)/replicated")
        }
        Benchmark.report("replication.pull", baselineSeconds: baseline, measuredSeconds: pull, goal: ">=0.5")
        print("# replication.pull: \(Int(Double(count) / pull)) documents/s")
        reportMemory("replication.pull.memory.peak", pullMemory)
        guard try target.defaultCollection().count == UInt64(count) else {
            throw CouchetteError(.corrupt, message: "the pull did not bring every document")
        }

        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    /// Prints how far the process's peak memory rose during a replication, gateway included.
    private func reportMemory(_ figure: String, _ megabytes: Double?) {
        guard let megabytes else { return print("# \(figure): not measurable here (/proc/self/clear_refs)") }
        print("BENCH \(figure) \(Benchmark.format(megabytes))MB info")
    }

    private func openDatabase(_ name: String, in directory: String) throws -> Database {
        var configuration = DatabaseConfiguration()
        configuration.directory = directory
        return try Database(name: name, config: configuration)
    }

    /// Seconds for one replicator run of `type` with the gateway database at `url`.
    private func replicate(_ database: Database, _ type: ReplicatorType, url: String) async throws -> Double {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: url)!))
        config.addCollection(try database.defaultCollection())
        config.replicatorType = type
        config.batchSize = batchSize
        let start = ContinuousClock.now
        try await Replicator(config: config).run()
        return Benchmark.seconds(since: start)
    }

    /// Seconds to post the documents by `_bulk_docs` batches from one client (bodies built before timing).
    private func bulkDocs(_ bodies: [JSONValue], url: String) async throws -> Double {
        let batches = stride(from: 0, to: bodies.count, by: batchSize).map { first in
            ByteBuffer(bytes: JSONValue.object(["docs": .array(Array(bodies[first..<min(first + batchSize, bodies.count)]))]).serialized())
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = http.shutdown() }
        let start = ContinuousClock.now
        for batch in batches {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(batch)
            let response = try await http.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 64 << 20)
            guard response.status == .created else { throw CouchetteError(.network, message: "baseline batch refused") }
        }
        return Benchmark.seconds(since: start)
    }
}
