import AsyncHTTPClient
import Couchette
import CouchetteCore
import CouchetteGateway
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The gateway's write path over loopback HTTP against the Lite library doing the same inserts in process:
/// `_bulk_docs` batches of 100 from 4 concurrent clients (`gateway.bulk-docs`, goal ≥ 0.8 of Lite's batched
/// insert; three rounds of both back to back into new databases, the median round's ratio: in a full `make bench`
/// the machine's state drifts between a baseline and a measurement run apart), and single-document `PUT`s from 4
/// clients (`gateway.put`, against Lite's single saves).
struct GatewayBenchmark {
    let count: Int
    let singleCount: Int
    let clients = 4
    let batchSize = 100
    let rounds = 3

    init(count: Int) {
        self.count = count
        self.singleCount = max(count / 10, 100)
    }

    func run() async throws {
        let samples = (0..<count).map { index in
            LiteBenchmark.Sample(
                id: "user1.\(UUID().uuidString)", title: "Task \(index): " + String(repeating: "x", count: 40 + index % 80),
                priority: index % 5, complete: index % 2 == 0, listID: "user1.\(index % 100)")
        }
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-gw-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# gateway: \(count) documents, _bulk_docs batches of \(batchSize) from \(clients) clients")

        // Baseline of the PUTs: the Lite library saving the same documents one at a time.
        let liteSingle = try liteInsert(
            Array(samples.prefix(singleCount)), directory: directory, name: "lite-single", batchSize: 1)

        let config = Benchmark.loopbackGateway(
            (0..<rounds).map { DatabaseConfig(name: "bulk\($0)", server: .directory(directory)) }
                + [DatabaseConfig(name: "single", server: .directory(directory))])
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let ports = try await server.waitUntilReady()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)

        // _bulk_docs: request bodies are built before timing, as the Lite side's dictionaries are.
        let batches: [ByteBuffer] = stride(from: 0, to: count, by: batchSize).map { start in
            let docs = samples[start..<min(start + batchSize, count)].map { sample -> JSONValue in
                var body = try! JSONValue(foundationObject: sample.properties)
                if case .object(var members) = body {
                    members["_id"] = .string(sample.id)
                    body = .object(members)
                }
                return body
            }
            return ByteBuffer(bytes: JSONValue.object(["docs": .array(docs)]).serialized())
        }
        // Each round: the Lite library inserting the documents in batches of the same size, then the gateway.
        var timings: [(lite: Double, gateway: Double)] = []
        for round in 0..<rounds {
            let lite = try liteInsert(samples, directory: directory, name: "lite-batched\(round)", batchSize: batchSize)
            let bulkURL = "http://127.0.0.1:\(ports.adminPort)/bulk\(round)/_bulk_docs"
            let gateway = try await Self.seconds {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in 0..<clients {
                        group.addTask {
                            for index in stride(from: client, to: batches.count, by: clients) {
                                try await Self.send(http, "POST", bulkURL, batches[index], expecting: 201)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            timings.append((lite, gateway))
        }
        let median = timings.sorted { $0.lite / $0.gateway < $1.lite / $1.gateway }[rounds / 2]
        let ratios = timings.map { Benchmark.format($0.lite / $0.gateway) }.joined(separator: ", ")
        print("# gateway.bulk-docs: rounds \(ratios)")
        Benchmark.report(
            "gateway.bulk-docs", baselineSeconds: median.lite, measuredSeconds: median.gateway, goal: ">=0.8")
        print("# gateway.bulk-docs: \(Int(Double(count) / median.gateway)) documents/s over HTTP")

        // Single-document PUTs.
        let bodies = samples.prefix(singleCount).map { ByteBuffer(bytes: try! JSONValue(foundationObject: $0.properties).serialized()) }
        let putSeconds = try await Self.seconds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<clients {
                    group.addTask {
                        for index in stride(from: client, to: bodies.count, by: clients) {
                            let url = "http://127.0.0.1:\(ports.adminPort)/single/\(samples[index].id)"
                            try await Self.send(http, "PUT", url, bodies[index], expecting: 201)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        Benchmark.report("gateway.put", baselineSeconds: liteSingle, measuredSeconds: putSeconds, goal: "info")
        print("# gateway.put: \(Int(Double(singleCount) / putSeconds)) requests/s from \(clients) clients")

        try await http.shutdown()
        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    /// Seconds the Lite library takes to insert `samples` in transactions of `batchSize`.
    private func liteInsert(_ samples: [LiteBenchmark.Sample], directory: String, name: String, batchSize: Int)
        throws -> Double
    {
        var configuration = DatabaseConfiguration()
        configuration.directory = directory
        let database = try Database(name: name, config: configuration)
        defer { try? database.close() }
        let collection = try database.defaultCollection()
        let properties = samples.map(\.properties)
        let start = ContinuousClock.now
        for first in stride(from: 0, to: samples.count, by: batchSize) {
            try database.inBatch {
                for index in first..<min(first + batchSize, samples.count) {
                    try collection.save(document: MutableDocument(id: samples[index].id, data: properties[index]))
                }
            }
        }
        return Benchmark.seconds(since: start)
    }

    private static func send(_ http: HTTPClient, _ method: String, _ url: String, _ body: ByteBuffer, expecting status: UInt)
        async throws
    {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(body)
        let response = try await http.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 16 << 20)
        guard response.status.code == status else {
            throw GatewayError(statusCode: Int(response.status.code), reason: "benchmark request failed: \(url)")
        }
    }

    private static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return Benchmark.seconds(since: start)
    }
}
