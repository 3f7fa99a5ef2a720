import Couchette
import CouchetteCore
import CouchetteGateway
import CouchetteTestSupport
import Foundation

/// Couchbase Lite's BLIP protocol against the CouchDB REST protocol, both between the Lite replicator and a gateway on
/// loopback in this process:
///
/// - `blip.push` and `blip.pull` (goal ≥ 1.2 each): `count` documents pushed from a Lite database to an empty gateway
///   database, then pulled into an empty Lite database — over REST (the baseline) and over BLIP, same documents.
/// - `blip.delta-bytes` (goal ≤ 0.1): the bytes the gateway sends (counted at a proxy) to pull a one-property edit of
///   1,000 documents of ~10 KB each with delta sync on, against the same pull from a database without it.
/// - `blip.feeds-kb` (goal ≤ 32): the gateway's memory per idle continuous BLIP subscription (``BLIPIdleClients``,
///   whose clients run in a child process), measured as `changes.feed-kb.10000` is (the allocator's bytes in use).
struct BLIPBenchmark {
    let count: Int
    /// Documents edited for `blip.delta-bytes`.
    let deltaCount = 1_000
    /// Idle subscriptions opened for `blip.feeds-kb`.
    let feedCount = 1_000

    func run() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-blip-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = ChangesBenchmark.raiseFileLimit(to: feedCount * 3 + 1_000)
        let guest = ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])]
        var deltas = DatabaseConfig(name: "delta-on", server: .directory(directory), users: guest)
        deltas.deltaSync = true
        let config = Benchmark.loopbackGateway([
            DatabaseConfig(name: "rest", server: .directory(directory), users: guest),
            DatabaseConfig(name: "blip", server: .directory(directory), users: guest),
            deltas,
            DatabaseConfig(name: "delta-off", server: .directory(directory), users: guest),
            DatabaseConfig(name: "feeds", users: guest),
        ])
        let server = try GatewayServer(config: config, logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let port = try await server.waitUntilReady().publicPort

        try await pushAndPull(port: port, directory: directory)
        try await deltaBytes(port: port, directory: directory)
        try await feedMemory(port: port)

        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    /// Only `blip.feeds-kb`, for profiling the memory of a subscription (`BENCH_ONLY=blip-feeds`).
    func runFeedMemoryOnly() async throws {
        _ = ChangesBenchmark.raiseFileLimit(to: feedCount * 3 + 1_000)
        let guest = ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])]
        let server = try GatewayServer(
            config: Benchmark.loopbackGateway([DatabaseConfig(name: "feeds", users: guest)]), logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        try await feedMemory(port: try await server.waitUntilReady().publicPort)
        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    /// For profiling (`BENCH_ONLY=blip-cpu`): the 100,000 documents pushed over BLIP and over REST, each into a
    /// gateway database of its own, then pulled from each into an empty Lite database the same way, printing each
    /// run's wall-clock and processor seconds (user and system, the whole process: both sides) — what each protocol
    /// costs, which drifts less with the machine than wall-clock ratios do. `BENCH_PROTOCOL=ws` or `http` runs that
    /// one only (for `perf record`; each run's start and end print as Unix time).
    func runProcessorTimesOnly() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-blip-cpu-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let guest = ["GUEST": UserConfig(name: "GUEST", adminChannels: ["*"])]
        let server = try GatewayServer(
            config: Benchmark.loopbackGateway([
                DatabaseConfig(name: "ws", server: .directory(directory), users: guest),
                DatabaseConfig(name: "http", server: .directory(directory), users: guest),
            ]), logger: Benchmark.quietLogger)
        let serverTask = Task { try await server.run() }
        let port = try await server.waitUntilReady().publicPort
        let source = try Benchmark.openDatabase("source", in: directory)
        try fill(source)
        let protocols = ProcessInfo.processInfo.environment["BENCH_PROTOCOL"].map { [$0] } ?? ["ws", "http"]
        for type in [ReplicatorType.push, .pull] {
            for scheme in protocols {
                let target = type == .push ? source : try Benchmark.openDatabase("pulled-\(scheme)", in: directory)
                let before = Benchmark.processorSeconds()
                let name = "\(scheme) \(type == .push ? "push" : "pull")"
                print("# \(name) starts at \(Date().timeIntervalSince1970)")
                let wall = try await Benchmark.replicate(target, type, url: "\(scheme)://127.0.0.1:\(port)/\(scheme)")
                let after = Benchmark.processorSeconds()
                print("# \(name) ends at \(Date().timeIntervalSince1970)")
                let (user, system) = (after.user - before.user, after.system - before.system)
                print(
                    "# \(name): \(Benchmark.format(wall)) s wall, \(Benchmark.format(user)) s user, "
                        + "\(Benchmark.format(system)) s system")
                if type == .pull { try target.close() }
            }
        }
        try source.close()
        await server.triggerGracefulShutdown()
        try await serverTask.value
    }

    // MARK: - blip.push, blip.pull

    /// `count` Todo-sized task documents in `database`.
    private func fill(_ database: Database) throws {
        let collection = try database.defaultCollection()
        for first in stride(from: 0, to: count, by: 1_000) {
            try database.inBatch {
                for index in first..<min(first + 1_000, count) {
                    _ = try collection.putProperties(
                        [
                            "type": "task", "title": "Task \(index): " + String(repeating: "x", count: 40 + index % 80),
                            "priority": index % 5, "complete": index % 2 == 0,
                        ], documentID: "user1.\(UUID().uuidString)")
                }
            }
        }
    }

    private func pushAndPull(port: Int, directory: String) async throws {
        print("# blip: \(count) documents, REST then BLIP")
        let source = try Benchmark.openDatabase("source", in: directory)
        defer { try? source.close() }
        try fill(source)
        let restPush = try await Benchmark.replicate(source, .push, url: "http://127.0.0.1:\(port)/rest")
        let blipPush = try await Benchmark.replicate(source, .push, url: "ws://127.0.0.1:\(port)/blip")
        Benchmark.report("blip.push", baselineSeconds: restPush, measuredSeconds: blipPush, goal: ">=1.2")
        print("# blip.push: REST \(Int(Double(count) / restPush)), BLIP \(Int(Double(count) / blipPush)) documents/s")

        let restTarget = try Benchmark.openDatabase("rest-target", in: directory)
        let blipTarget = try Benchmark.openDatabase("blip-target", in: directory)
        defer {
            try? restTarget.close()
            try? blipTarget.close()
        }
        let restPull = try await Benchmark.replicate(restTarget, .pull, url: "http://127.0.0.1:\(port)/rest")
        let blipPull = try await Benchmark.replicate(blipTarget, .pull, url: "ws://127.0.0.1:\(port)/blip")
        Benchmark.report("blip.pull", baselineSeconds: restPull, measuredSeconds: blipPull, goal: ">=1.2")
        print("# blip.pull: REST \(Int(Double(count) / restPull)), BLIP \(Int(Double(count) / blipPull)) documents/s")
        for target in [restTarget, blipTarget] where try target.defaultCollection().count != UInt64(count) {
            throw CouchetteError(.corrupt, message: "a pull did not bring every document")
        }
    }

    // MARK: - blip.delta-bytes

    /// Pushes `deltaCount` documents of ~10 KB (text that compresses badly, as the socket is deflated) to a database
    /// with delta sync and one without, pulls each into an empty Lite database, edits one property of every document
    /// and pushes the edits; then counts the bytes of pulling the edits from each.
    private func deltaBytes(port: Int, directory: String) async throws {
        print("# blip.delta-bytes: a one-property edit of \(deltaCount) documents of ~10 KB")
        let proxy = try ChaosProxy(targetPort: port, cutProbability: 0)
        defer { proxy.stop() }
        let source = try Benchmark.openDatabase("delta-source", in: directory)
        defer { try? source.close() }
        let collection = try source.defaultCollection()
        var generator = SplitMix64(state: 42)
        try source.inBatch {
            for index in 0..<deltaCount {
                let text = Data((0..<7_500).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).base64EncodedString()
                _ = try collection.putProperties(["n": index, "text": text], documentID: "doc\(index)")
            }
        }
        var targets: [String: Database] = [:]
        for name in ["delta-on", "delta-off"] {
            _ = try await Benchmark.replicate(source, .push, url: "ws://127.0.0.1:\(port)/\(name)")
            targets[name] = try Benchmark.openDatabase("\(name)-target", in: directory)
            _ = try await Benchmark.replicate(targets[name]!, .pull, url: "ws://127.0.0.1:\(proxy.port)/\(name)")
        }
        defer { for target in targets.values { try? target.close() } }
        try source.inBatch {
            for index in 0..<deltaCount {
                guard let document = try collection.document(id: "doc\(index)") else { continue }
                try collection.save(document: document.toMutable().setInt(index + 1_000_000, forKey: "n"))
            }
        }
        var bytes: [String: Int] = [:]
        for name in ["delta-on", "delta-off"] {
            _ = try await Benchmark.replicate(source, .push, url: "ws://127.0.0.1:\(port)/\(name)")
            let before = proxy.bytesToClients
            _ = try await Benchmark.replicate(targets[name]!, .pull, url: "ws://127.0.0.1:\(proxy.port)/\(name)")
            bytes[name] = proxy.bytesToClients - before
            guard try targets[name]!.defaultCollection().document(id: "doc7")?.int(forKey: "n") == 1_000_007 else {
                throw CouchetteError(.corrupt, message: "the edits did not come down from \(name)")
            }
        }
        let on = Double(bytes["delta-on"] ?? 0)
        let off = Double(bytes["delta-off"] ?? 1)
        print("# blip.delta-bytes: \(Int(on)) bytes with deltas, \(Int(off)) without")
        print("BENCH blip.delta-bytes \(Benchmark.format(on / off)) <=0.1")
    }

    // MARK: - blip.feeds-kb

    private func feedMemory(port: Int) async throws {
        let before = ChangesBenchmark.inUseKilobytes()
        let url = "ws://127.0.0.1:\(port)/feeds/_blipsync"
        let clients = try await offCooperativeThreads { try BLIPIdleClients.Remote(count: feedCount, url: url) }
        let perFeed = Double(ChangesBenchmark.inUseKilobytes() - before) / Double(feedCount)
        print("# blip.feeds-kb: \(feedCount) idle continuous subscriptions, the clients in another process")
        print("BENCH blip.feeds-kb \(Benchmark.format(perFeed)) <=32")
        clients.close()
    }

    // MARK: - Helpers

}
