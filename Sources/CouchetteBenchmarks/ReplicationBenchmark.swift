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
/// goal ≥ 0.75 each), in three rounds of all three into new databases, the median round's ratios. Then documents
/// holding a 10 KB Couchbase Lite 3 blob each are pushed, against pushing the same bytes as 1.x attachments
/// (`replication.push.blobs`, goal ≥ 0.9).
struct ReplicationBenchmark {
    let count: Int
    let batchSize = 200
    /// This machine's speed wanders by more than the figures' margins within seconds: the ratios of a baseline and a
    /// replication measured moments apart, the median of three such rounds.
    let roundCount = 3

    func run() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-repl-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# replication: \(count) documents, batches of \(batchSize)")
        let guest = ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])]
        let config = Benchmark.loopbackGateway(
            (0..<roundCount).flatMap { round in
                [
                    DatabaseConfig(name: "baseline\(round)", server: .directory(directory), users: guest),
                    DatabaseConfig(name: "replicated\(round)", server: .directory(directory), users: guest),
                ]
            } + [
                DatabaseConfig(name: "attachments", server: .directory(directory), users: guest),
                DatabaseConfig(name: "blobs", server: .directory(directory), users: guest),
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
        let source = try Benchmark.openDatabase("source", in: directory)
        defer { try? source.close() }
        let collection = try source.defaultCollection()
        for first in stride(from: 0, to: count, by: 1_000) {
            try source.inBatch {
                for document in documents[first..<min(first + 1_000, count)] {
                    _ = try collection.putProperties(document.properties, documentID: document.id)
                }
            }
        }
        var rounds: [(baseline: Double, push: Double, pull: Double)] = []
        for round in 0..<roundCount {
            let baseline = try await bulkDocs(bodies, url: "\(base)/baseline\(round)/_bulk_docs")
            let (push, pushMemory) = try await PeakMemory.rise {
                try await Benchmark.replicate(source, .push, url: "\(base)/replicated\(round)", batchSize: batchSize)
            }
            let target = try Benchmark.openDatabase("target\(round)", in: directory)
            defer { try? target.close() }
            let (pull, pullMemory) = try await PeakMemory.rise {
                try await Benchmark.replicate(target, .pull, url: "\(base)/replicated\(round)", batchSize: batchSize)
            }
            guard try target.defaultCollection().count == UInt64(count) else {
                throw CouchetteError(.corrupt, message: "the pull did not bring every document")
            }
            print(
                "# replication round \(round + 1): baseline \(Int(Double(count) / baseline)), push \(Int(Double(count) / push)), "
                    + "pull \(Int(Double(count) / pull)) documents/s")
            if round == 0 {
                reportMemory("replication.push.memory.peak", pushMemory)
                reportMemory("replication.pull.memory.peak", pullMemory)
            }
            rounds.append((baseline, push, pull))
        }
        let push = rounds.sorted { $0.baseline / $0.push < $1.baseline / $1.push }[roundCount / 2]
        Benchmark.report("replication.push", baselineSeconds: push.baseline, measuredSeconds: push.push, goal: ">=0.75")
        let pull = rounds.sorted { $0.baseline / $0.pull < $1.baseline / $1.pull }[roundCount / 2]
        Benchmark.report("replication.pull", baselineSeconds: pull.baseline, measuredSeconds: pull.pull, goal: ">=0.75")

        try await pushBlobs(base: base, directory: directory)

        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    /// `replication.push.blobs`: documents with a distinct 10 KB blob each (`setBlob`), pushed to an empty database,
    /// against the same documents and bytes as 1.x attachments (`_attachments`) pushed to another.
    private func pushBlobs(base: String, directory: String) async throws {
        let blobCount = max(count / 20, 500)
        print("# replication.push.blobs: \(blobCount) documents with a 10 KB blob each")
        let attachments = try Benchmark.openDatabase("with-attachments", in: directory)
        let blobs = try Benchmark.openDatabase("with-blobs", in: directory)
        defer {
            try? attachments.close()
            try? blobs.close()
        }
        for first in stride(from: 0, to: blobCount, by: 500) {
            let range = first..<min(first + 500, blobCount)
            try attachments.inBatch {
                for index in range {
                    let blob = Blob(contentType: "image/jpeg", data: Self.content(index))
                    _ = try attachments.defaultCollection().putProperties(
                        ["type": "photo", "n": index, "_attachments": ["image": blob]], documentID: "photo-\(index)")
                }
            }
            try blobs.inBatch {
                for index in range {
                    let document = MutableDocument(id: "photo-\(index)").setString("photo", forKey: "type")
                        .setInt(index, forKey: "n").setBlob(Blob(contentType: "image/jpeg", data: Self.content(index)), forKey: "image")
                    try blobs.defaultCollection().save(document: document)
                }
            }
        }
        let baseline = try await Benchmark.replicate(attachments, .push, url: "\(base)/attachments", batchSize: batchSize)
        let measured = try await Benchmark.replicate(blobs, .push, url: "\(base)/blobs", batchSize: batchSize)
        Benchmark.report("replication.push.blobs", baselineSeconds: baseline, measuredSeconds: measured, goal: ">=0.9")
        print("# replication.push.blobs: \(Int(Double(blobCount) / measured)) documents/s")
    }

    /// 10 KB of badly compressible bytes, different for each index.
    private static func content(_ index: Int) -> Data {
        var state = UInt64(index) &+ 0x9E37_79B9_7F4A_7C15
        return Data((0..<10_240).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
    }

    /// Prints how far the process's peak memory rose during a replication, gateway included.
    private func reportMemory(_ figure: String, _ megabytes: Double?) {
        guard let megabytes else { return print("# \(figure): not measurable here (/proc/self/clear_refs)") }
        print("BENCH \(figure) \(Benchmark.format(megabytes))MB info")
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
