import Couchette
import CouchetteCore
import CouchetteGateway
import Foundation

/// A genuine Couchbase Lite 3.0 client (`../shared/tools/cblite/cblite`, LiteCore's BLIP replicator) syncing
/// `count` documents with the gateway, against our own REST replicator moving the same documents in the same run:
/// `cbl3.push` (a `cblite push` of a device holding them, into an empty database, timed whole as one process ÷ our
/// replicator's push of a Lite database holding them) and `cbl3.pull` (`cblite pull` into an empty device ÷ our
/// replicator's pull into an empty Lite database), goal ≥ 1.0 each: an app must not sync slower than our own client.
/// Skipped, saying so, where the binary is absent.
struct CBLiteBenchmark {
    let count: Int

    func run() async throws {
        guard let cblite = Self.locate() else {
            print("# cbl3: skipped, ../shared/tools/cblite/cblite is not beside the repository (COUCHETTE_CBLITE)")
            return
        }
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-cbl3-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# cbl3: \(count) documents, cblite against our REST replicator")
        let guest = ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])]
        let config = Benchmark.loopbackGateway(
            ["rest", "device", "tool"].map { DatabaseConfig(name: $0, server: .directory(directory), users: guest) })
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        defer { serverTask.cancel() }
        let ports = try await server.waitUntilReady()

        // The same documents on both sides: a Lite database, and a device made by importing JSON lines (untimed).
        let documents: [(id: String, properties: [String: Any])] = (0..<count).map { index in
            (
                "user1.\(UUID().uuidString)",
                [
                    "type": "task", "title": "Task \(index): " + String(repeating: "x", count: 40 + index % 80),
                    "priority": index % 5, "complete": index % 2 == 0,
                ]
            )
        }
        let source = try Benchmark.openDatabase("source", in: directory)
        defer { try? source.close() }
        let collection = try source.defaultCollection()
        var lines: [UInt8] = []
        for first in stride(from: 0, to: count, by: 1_000) {
            try source.inBatch {
                for document in documents[first..<min(first + 1_000, count)] {
                    _ = try collection.putProperties(document.properties, documentID: document.id)
                    var body = try JSONValue(foundationObject: document.properties).objectValue ?? [:]
                    body["_id"] = .string(document.id)
                    lines += JSONValue.object(body).serialized() + [UInt8(ascii: "\n")]
                }
            }
        }
        let file = directory + "/documents.json"
        try Data(lines).write(to: URL(fileURLWithPath: file))
        let device = directory + "/device.cblite2"
        try Benchmark.runTool(cblite, ["--create", "cp", file, device])
        try FileManager.default.createDirectory(atPath: device + "/Attachments", withIntermediateDirectories: true)

        let restBase = "http://127.0.0.1:\(ports.publicPort)"
        let blipBase = "ws://127.0.0.1:\(ports.publicPort)"
        var usage = ProcessorUsage()
        let restPush = try await Benchmark.replicate(source, .push, url: "\(restBase)/rest")
        usage.note("REST push (replicator and gateway)")
        let cblitePush = try Benchmark.timed { try Benchmark.runTool(cblite, ["push", device, "\(blipBase)/device"]) }
        usage.note("cblite push", tool: true)
        // The same REST push from a process of its own (`couchette push`), so that the gateway's share of a REST push
        // shows apart from our replicator's (not a figure: where the processor time goes).
        let tool = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("couchette")
        if FileManager.default.isExecutableFile(atPath: tool.path) {
            let seconds = try Benchmark.timed {
                try Benchmark.runTool(tool, ["push", directory + "/source.couchette", "\(restBase)/tool"])
            }
            usage.note("couchette push over REST, \(Benchmark.format(seconds * 1000)) ms", tool: true)
        }
        let pulled = try Benchmark.openDatabase("pulled", in: directory)
        defer { try? pulled.close() }
        let restPull = try await Benchmark.replicate(pulled, .pull, url: "\(restBase)/rest")
        usage.note("REST pull (replicator and gateway)")
        let cblitePull = try Benchmark.timed {
            try Benchmark.runTool(cblite, ["--create", "pull", directory + "/pulled.cblite2", "\(blipBase)/rest"])
        }
        usage.note("cblite pull", tool: true)
        guard try pulled.defaultCollection().count == UInt64(count) else {
            throw CouchetteError(.corrupt, message: "the REST pull did not bring every document")
        }
        let info = try await server.registry.info(forDatabase: "device")
        guard info.statistics.documentCount == count else {
            throw CouchetteError(.corrupt, message: "cblite's push stored \(info.statistics.documentCount) of \(count) documents")
        }
        Benchmark.report("cbl3.push", baselineSeconds: restPush, measuredSeconds: cblitePush, goal: ">=1.0")
        Benchmark.report("cbl3.pull", baselineSeconds: restPull, measuredSeconds: cblitePull, goal: ">=1.0")
        await server.triggerGracefulShutdown()
        _ = try? await serverTask.value
    }

    /// `cblite` beside the repository (`COUCHETTE_CBLITE` names another).
    static func locate() -> URL? {
        let manager = FileManager.default
        if let given = ProcessInfo.processInfo.environment["COUCHETTE_CBLITE"] {
            return manager.isExecutableFile(atPath: given) ? URL(fileURLWithPath: given) : nil
        }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<8 {
            if manager.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                let candidate = folder.deletingLastPathComponent().appendingPathComponent("shared/tools/cblite/cblite")
                return manager.isExecutableFile(atPath: candidate.path) ? candidate : nil
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }
}

// MARK: - ProcessorUsage

/// Where the processor time of each phase went: this process (the gateway, and our replicator when it runs here) and
/// `cblite` (a child). On a machine of few cores the client's own processor time bounds how fast a replication can
/// go: the lines say how much of each phase's wall time the client alone needed.
struct ProcessorUsage {
    private var process: Double
    private var children: Double

    init() {
        let own = Benchmark.processorSeconds()
        process = own.user + own.system
        children = Benchmark.childrenProcessorSeconds()
    }

    /// Prints the processor seconds used since the last note, by this process and, for a phase that ran a tool
    /// (`cblite`, `couchette`), by it.
    mutating func note(_ phase: String, tool: Bool = false) {
        let own = Benchmark.processorSeconds()
        let now = (process: own.user + own.system, children: Benchmark.childrenProcessorSeconds())
        let line = "# cbl3 cpu, \(phase): this process \(Benchmark.format(now.process - process)) s"
        print(line + (tool ? ", the tool \(Benchmark.format(now.children - children)) s" : ""))
        (process, children) = now
    }
}
