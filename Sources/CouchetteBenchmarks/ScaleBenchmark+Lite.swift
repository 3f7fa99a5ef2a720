import Couchette
import Foundation

/// The Lite side of `make bench-scale`: a `Database` of 1,000,000 documents against one of 10,000, in the same run.
///
/// - `scale.lite.open-ms`: opening the database (median of 5), 1M ÷ 10k (goal ≤ 1.5).
/// - `scale.lite.query.p50`: p50 of an indexed equality query returning 100 rows, 1M ÷ 10k (goal ≤ 1.5).
/// - `scale.lite.pull-docs-per-s`: documents/s of a pull of the gateway's database into an empty one (REST), 1M ÷
///   10k (goal ≥ 0.8), and `scale.lite.pull-memory`: the peak rise of anonymous memory during the 1M pull ÷ during
///   the 10k one (client and gateway in this process; goal ≤ 1.5).
extension ScaleBenchmark {
    /// Documents per query group: an equality query returns this many rows at any size.
    static let groupSize = 100

    func measureLite(pullingFrom admin: String) async throws {
        var openMilliseconds: [Int: Double] = [:]
        var queryP50: [Int: Double] = [:]
        for count in [small, large] {
            try buildLite(count)
            openMilliseconds[count] = try liteOpenMilliseconds(count)
            queryP50[count] = try liteQueryP50(count)
            print(
                "# scale.lite \(count): open \(Benchmark.format(openMilliseconds[count]!)) ms, query p50 \(Benchmark.format(queryP50[count]! * 1000)) ms"
            )
        }
        Self.reportAtMost("scale.lite.open-ms", openMilliseconds[large]! / openMilliseconds[small]!, goal: 1.5)
        Self.reportAtMost("scale.lite.query.p50", queryP50[large]! / queryP50[small]!, goal: 1.5)

        var rate: [Int: Double] = [:]
        var memory: [Int: Double] = [:]
        for count in [small, large] {
            let directory = folder + "/pulled-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let database = try Benchmark.openDatabase("pulled", in: directory)
            let (seconds, rise) = try await PeakMemory.rise {
                try await Benchmark.replicate(database, .pull, url: "\(admin)/\(Self.name(count))")
            }
            let pulled = Int(try database.defaultCollection().count)
            try database.close()
            guard pulled == count else { throw ChangesBenchmark.Failure("the pull brought \(pulled) of \(count)") }
            rate[count] = Double(count) / seconds
            memory[count] = rise ?? 0
            print(
                "# scale.lite \(count): pull \(Int(rate[count]!)) docs/s, peak memory rise \(Benchmark.format(memory[count]!)) MB"
            )
        }
        print("BENCH scale.lite.pull-docs-per-s \(Benchmark.format(rate[large]! / rate[small]!)) >=0.8")
        Self.reportAtMost("scale.lite.pull-memory", memory[large]! / max(memory[small]!, 1), goal: 1.5)
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

    /// The median of 5 opens (and closes) of the database of `count` documents, in ms.
    private func liteOpenMilliseconds(_ count: Int) throws -> Double {
        var times: [Double] = []
        for _ in 0..<5 {
            let start = ContinuousClock.now
            let database = try Benchmark.openDatabase("lite\(count)", in: folder)
            _ = try database.defaultCollection()
            times.append(Benchmark.seconds(since: start) * 1000)
            try database.close()
        }
        return times.sorted()[2]
    }

    /// The p50, in seconds, of 200 queries `WHERE lot = $lot` (100 rows each) at random groups.
    private func liteQueryP50(_ count: Int) throws -> Double {
        let database = try Benchmark.openDatabase("lite\(count)", in: folder)
        defer { try? database.close() }
        let query = try database.createQuery("SELECT META().id, title FROM _ WHERE lot = $lot")
        var random = SystemRandomNumberGenerator()
        var times: [Double] = []
        for round in 0..<220 {
            query.parameters = Parameters().setInt(Int.random(in: 0..<(count / Self.groupSize), using: &random), forName: "lot")
            let start = ContinuousClock.now
            let rows = try query.execute().allResults()
            if round >= 20 { times.append(Benchmark.seconds(since: start)) }
            guard rows.count == Self.groupSize else { throw ChangesBenchmark.Failure("a group of \(rows.count) rows") }
        }
        return times.sorted()[times.count / 2]
    }
}
