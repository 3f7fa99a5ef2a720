import Couchette
import CouchetteSQLite
import Foundation

/// Queries on `count` task documents, each against the same query hand-written in SQL for a plain SQLite table of the
/// same JSON documents (`id`, `body`) with the same expression indexes, in this process: an indexed equality query (`query.indexed-equality`), a
/// range query (`query.range`), a grouped count (`query.grouped-reduce`, SQL++ `GROUP BY`; the tutorial's map/reduce
/// view doing it is `view.grouped-reduce`); the view index build rate; and the delay from a commit to a live query's
/// new result on a 10,000-row result (`livequery.p50-ms`, `livequery.p99-ms`).
struct QueryBenchmark {
    let count: Int

    /// The lists tasks belong to (about `count / lists` tasks each).
    private var lists: Int { max(count / 100, 1) }

    func run() async throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-query-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# queries: \(count) documents")
        var config = DatabaseConfiguration()
        config.directory = directory
        let db = try Database(name: "bench", config: config)
        defer { try? db.close() }
        let raw = try Connection(path: (directory as NSString).appendingPathComponent("raw.sqlite3"))
        defer { raw.close() }
        try fill(db, raw)

        let collection = try db.defaultCollection()
        try collection.createIndex(withName: "byList", config: ValueIndexConfiguration(["taskList.id"]))
        try collection.createIndex(withName: "byNumber", config: ValueIndexConfiguration(["n"]))
        try raw.execute("CREATE INDEX tasks_by_list ON tasks (json_extract(body, '$.taskList.id'))")
        try raw.execute("CREATE INDEX tasks_by_number ON tasks (json_extract(body, '$.n'))")

        // Indexed equality: the tasks of each of 1,000 lists (~100 rows each).
        let probes = (0..<1_000).map { "list-\(($0 * 7919) % lists)" }
        let equality = try db.createQuery("SELECT META().id, task FROM _ WHERE taskList.id = $list")
        let ours = try Benchmark.fastest(repetitions: 3) {
            for list in probes {
                equality.parameters = Parameters().setString(list, forName: "list")
                _ = try equality.execute().allResults()
            }
        }
        let baseline = try Benchmark.fastest(repetitions: 3) {
            for list in probes {
                _ = try raw.query(
                    "SELECT id, json_extract(body, '$.task') FROM tasks WHERE json_extract(body, '$.taskList.id') = ?", list)
            }
        }
        Benchmark.report("query.indexed-equality", baselineSeconds: baseline, measuredSeconds: ours, goal: ">=0.5")

        // Range: 1,000 ranges of 100 numbers.
        let starts = (0..<1_000).map { ($0 * 7919) % max(count - 100, 1) }
        let range = try db.createQuery("SELECT META().id, n FROM _ WHERE n BETWEEN $low AND $high")
        if ProcessInfo.processInfo.environment["BENCH_VERBOSE"] != nil { print(try range.explain()) }
        let oursRange = try Benchmark.fastest(repetitions: 3) {
            for low in starts {
                range.parameters = Parameters().setInt(low, forName: "low").setInt(low + 99, forName: "high")
                _ = try range.execute().allResults()
            }
        }
        let baselineRange = try Benchmark.fastest(repetitions: 3) {
            for low in starts {
                _ = try raw.query(
                    "SELECT id, json_extract(body, '$.n') FROM tasks WHERE json_extract(body, '$.n') BETWEEN ? AND ?", low,
                    low + 99)
            }
        }
        Benchmark.report("query.range", baselineSeconds: baselineRange, measuredSeconds: oursRange, goal: ">=0.5")

        // Grouped count of incomplete tasks per list.
        let grouped = try db.createQuery(
            "SELECT taskList.id AS list, COUNT(*) AS n FROM _ WHERE complete = false GROUP BY taskList.id")
        let oursGrouped = try Benchmark.fastest(repetitions: 3) { _ = try grouped.execute().allResults() }
        let baselineGrouped = try Benchmark.fastest(repetitions: 3) {
            _ = try raw.query(
                """
                SELECT json_extract(body, '$.taskList.id'), count(*) FROM tasks WHERE json_extract(body, '$.complete') = 0
                GROUP BY json_extract(body, '$.taskList.id')
                """)
        }
        Benchmark.report("query.grouped-reduce", baselineSeconds: baselineGrouped, measuredSeconds: oursGrouped, goal: ">=0.5")

        // The tutorial's view: build rate, then the grouped reduce.
        let view = try db.view(named: "incompleteTasksCount")
        view.setMapBlock({ doc, emit in
            if doc["type"] as? String == "task", let list = doc["taskList"] as? [String: Any], let id = list["id"],
                doc["complete"] as? Bool == false
            {
                emit(id, nil)
            }
        }, reduce: BuiltInReduce.count, version: "1")
        let build = try Benchmark.timed { try view.updateIndex() }
        print("BENCH view.build-docs-per-s \(Benchmark.format(Double(count) / build)) info")
        var viewQuery = view.createQuery()
        viewQuery.groupLevel = 1
        let oursView = try Benchmark.fastest(repetitions: 3) { _ = try viewQuery.run() }
        Benchmark.report("view.grouped-reduce", baselineSeconds: baselineGrouped, measuredSeconds: oursView, goal: "info")

        try await liveQueryDelays(db)
    }

    /// Delays from a commit to the new result of a live query returning 10,000 rows.
    private func liveQueryDelays(_ db: Database) async throws {
        let rows = min(10_000, count)
        let query = try db.createQuery("SELECT META().id, task, priority FROM _ WHERE n < \(rows)")
        let (results, continuation) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        let token = query.addChangeListener(withQueue: DispatchQueue(label: "bench.live")) { _ in
            continuation.yield(ContinuousClock.now)
        }
        defer { token.remove() }
        var deliveries = results.makeAsyncIterator()
        _ = await deliveries.next()
        let collection = try db.defaultCollection()
        var delays: [Double] = []
        for round in 0..<100 {
            let id = "task-\((round * 97) % rows)"
            guard let document = try collection.document(id: id)?.toMutable() else { continue }
            document.setInt(1_000 + round, forKey: "priority")  // always a change
            try collection.save(document: document)
            let saved = ContinuousClock.now
            guard let delivered = await deliveries.next() else { break }
            delays.append(Benchmark.seconds(delivered - saved) * 1000)
        }
        delays.sort()
        guard !delays.isEmpty else { return }
        print("BENCH livequery.p50-ms \(Benchmark.format(delays[delays.count / 2])) info")
        print("BENCH livequery.p99-ms \(Benchmark.format(delays[min(delays.count - 1, delays.count * 99 / 100)])) <20")
    }

    private func fill(_ db: Database, _ raw: Connection) throws {
        let collection = try db.defaultCollection()
        try raw.execute("CREATE TABLE tasks (id TEXT PRIMARY KEY, body BLOB NOT NULL)")
        for first in stride(from: 0, to: count, by: 1_000) {
            try db.inBatch {
                for index in first..<min(first + 1_000, count) {
                    _ = try collection.putProperties(properties(index), documentID: "task-\(index)")
                }
            }
            try raw.transaction { raw in
                for index in first..<min(first + 1_000, count) {
                    let body = try JSONSerialization.data(withJSONObject: properties(index), options: [.sortedKeys])
                    try raw.execute("INSERT INTO tasks VALUES (?, ?)", "task-\(index)", body)
                }
            }
        }
    }

    private func properties(_ index: Int) -> [String: Any] {
        [
            "type": "task", "task": "Task \(index)", "priority": index % 10, "complete": index % 3 == 0,
            "taskList": ["id": "list-\(index % lists)", "owner": "user1"], "n": index,
        ]
    }
}
