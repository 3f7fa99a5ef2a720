import Couchette
import Foundation

/// The Lite side of `make bench-scale`: a `Database` of 1,000,000 documents against one of 10,000, in the same run.
///
/// - `scale.lite.open-ms`: opening the database (median of 5), 1M ÷ 10k (goal ≤ 1.5).
/// - `scale.lite.query.p50`: p50 of an indexed equality query returning 100 rows, 1M ÷ 10k (goal ≤ 1.5).
/// - `scale.lite.pull-docs-per-s`: documents/s of a pull of the gateway's database into an empty one (REST, the
///   client in a process of its own), 1M ÷ 10k (goal ≥ 0.8), and `scale.lite.pull-memory`: the peak rise of the
///   client's anonymous memory during the 1M pull ÷ during the 10k one (goal ≤ 1.5), and the same ÷ during a pull of
///   100,000 (`scale.lite.pull-memory.vs-100000`), whose database outgrows the caches as the million's does.
extension ScaleBenchmark {
    /// Documents per query group: an equality query returns this many rows at any size.
    static let groupSize = 100

    func measureLite(pullingFrom admin: String) async throws {
        for count in [small, large] { try buildLite(count) }
        let openMilliseconds = try liteOpenMilliseconds([small, large])
        let queryP50 = try liteQueryP50([small, large])
        for count in [small, large] {
            print(
                "# scale.lite \(count): open \(Benchmark.format(openMilliseconds[count]!)) ms, query p50 \(Benchmark.format(queryP50[count]! * 1000)) ms"
            )
        }
        Self.reportAtMost("scale.lite.open-ms", openMilliseconds[large]! / openMilliseconds[small]!, goal: 1.5)
        Self.reportAtMost("scale.lite.query.p50", queryP50[large]! / queryP50[small]!, goal: 1.5)

        var rate: [Int: Double] = [:]
        var memory: [Int: Double] = [:]
        let middle = min(self.middle, large)
        for count in Array(Set([small, middle, large])).sorted() {
            // In a process of its own, started fresh: what an earlier pull left allocated is not this one's.
            let directory = folder + "/pulled-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let figures = try await Self.offMainThreads {
                try Self.inChild(
                    ["BENCH_SCALE_PULL": "\(admin)/\(Self.name(count)) \(directory)"], answer: "pulled", count: 3)
            }
            guard Int(figures[2]) == count else { throw ChangesBenchmark.Failure("the pull brought \(figures[2]) of \(count)") }
            rate[count] = Double(count) / figures[0]
            memory[count] = figures[1]
            print(
                "# scale.lite \(count): pull \(Int(rate[count]!)) docs/s, peak memory rise \(Benchmark.format(memory[count]!)) MB"
            )
        }
        print("BENCH scale.lite.pull-docs-per-s \(Benchmark.format(rate[large]! / rate[small]!)) >=0.8")
        Self.reportAtMost("scale.lite.pull-memory", memory[large]! / max(memory[small]!, 1), goal: 1.5)
        // The 10,000-document databases (4 MB) fit in the SQLite page caches the pull fills to their bound with a
        // larger one: past that, memory should not grow with the database.
        print("BENCH scale.lite.pull-memory.vs-\(middle) \(Benchmark.format(memory[large]! / max(memory[middle]!, 1))) info")
    }

    /// Runs blocking work (waiting for a child process) on a thread of its own, off the gateway's threads.
    static func offMainThreads<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// The child side of the pull: `BENCH_SCALE_PULL="<url> <folder>"` pulls the remote database into a new one in
    /// the folder and prints `pulled <seconds> <peak MB of anonymous memory above the start> <documents>`.
    static func runPullChildIfAsked() async throws {
        guard let spec = ProcessInfo.processInfo.environment["BENCH_SCALE_PULL"] else { return }
        let parts = spec.split(separator: " ").map(String.init)
        guard parts.count == 2 else { exit(2) }
        let database = try Benchmark.openDatabase("pulled", in: parts[1])
        let (seconds, rise) = try await PeakMemory.rise {
            try await Benchmark.replicate(database, .pull, url: parts[0])
        }
        let pulled = try database.defaultCollection().count
        try database.close()
        print("pulled \(seconds) \(rise ?? 0) \(pulled)")
        exit(0)
    }

    /// Writes the Lite database of `count` documents, with a value index on `lot`, unless an earlier run did.
    private func buildLite(_ count: Int) throws {
        let marker = folder + "/lite\(count).built"
        if FileManager.default.fileExists(atPath: marker) { return }
        let start = ContinuousClock.now
        let database = try Benchmark.openDatabase("lite\(count)", in: folder)
        let collection = try database.defaultCollection()
        try collection.createIndex(withName: "byLot", config: ValueIndexConfiguration(["lot"]))
        for first in stride(from: 0, to: count, by: 10_000) {
            try database.inBatch {
                for index in first..<min(first + 10_000, count) {
                    _ = try collection.putProperties(
                        [
                            "type": "task", "title": "Task \(index): buy milk, eggs and bread", "complete": index % 3 == 0,
                            "lot": index / Self.groupSize, "taskList": ["id": "list\(index % 5_000)"],
                        ], documentID: Self.id(index))
                }
            }
        }
        try database.close()
        FileManager.default.createFile(atPath: marker, contents: Data())
        print("# scale.lite: built \(count) documents in \(Benchmark.format(Benchmark.seconds(since: start))) s")
    }

    /// The median of 9 opens (and closes) of the database of each size, in ms, the sizes taking turns.
    private func liteOpenMilliseconds(_ counts: [Int]) throws -> [Int: Double] {
        var times: [Int: [Double]] = [:]
        for _ in 0..<9 {
            for count in counts {
                let start = ContinuousClock.now
                let database = try Benchmark.openDatabase("lite\(count)", in: folder)
                _ = try database.defaultCollection()
                times[count, default: []].append(Benchmark.seconds(since: start) * 1000)
                try database.close()
            }
        }
        return times.mapValues { $0.sorted()[$0.count / 2] }
    }

    /// The p50, in seconds, of 400 queries `WHERE lot = $lot` (100 rows each) at random lots on the database of each
    /// size, the sizes taking turns.
    private func liteQueryP50(_ counts: [Int]) throws -> [Int: Double] {
        let databases = try counts.map { try Benchmark.openDatabase("lite\($0)", in: folder) }
        defer { for database in databases { try? database.close() } }
        let queries = try databases.map { try $0.createQuery("SELECT META().id, title FROM _ WHERE lot = $lot") }
        var random = SystemRandomNumberGenerator()
        var times: [Int: [Double]] = [:]
        for round in 0..<420 {
            for (count, query) in zip(counts, queries) {
                query.parameters = Parameters().setInt(
                    Int.random(in: 0..<(count / Self.groupSize), using: &random), forName: "lot")
                let start = ContinuousClock.now
                let rows = try query.execute().allResults()
                if round >= 20 { times[count, default: []].append(Benchmark.seconds(since: start)) }
                guard rows.count == Self.groupSize else { throw ChangesBenchmark.Failure("a lot of \(rows.count) rows") }
            }
        }
        return times.mapValues { $0.sorted()[$0.count / 2] }
    }
}
