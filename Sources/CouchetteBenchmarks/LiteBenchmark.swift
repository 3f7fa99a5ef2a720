import Couchette
import CouchetteCore
import Foundation

/// Couchette's document API against raw SQLite doing the same work: inserts one per transaction and in
/// batches of 1,000, reads of random IDs, and an update pass, on ~300-byte Todo documents with the same
/// random IDs; plus peak memory at 10k and 100k documents.
struct LiteBenchmark {
    struct Sample {
        var id: String
        var title: String
        var priority: Int
        var complete: Bool
        var listID: String

        var properties: [String: Any] {
            [
                "type": "task", "task": title, "priority": priority, "complete": complete,
                "createdAt": "2026-11-22T00:19:14.000Z", "taskList": ["id": listID, "owner": "user1"],
                "tags": ["groceries", "weekly"],
            ]
        }

        var json: [UInt8] { try! JSONValue(foundationObject: properties).serialized() }
    }

    let count: Int
    let samples: [Sample]
    let directory: String

    init(count: Int = 100_000) {
        self.count = count
        var generator = SystemRandomNumberGenerator()
        samples = (0..<count).map { index in
            Sample(
                id: "user1.\(UUID().uuidString)",
                title: "Task \(index): " + String(repeating: "x", count: Int.random(in: 40...120, using: &generator)),
                priority: index % 5, complete: index % 2 == 0, listID: "user1.\(index % 100)")
        }
        directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-bench-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func freshDatabase(_ name: String) throws -> Database {
        var config = DatabaseConfiguration()
        config.directory = directory
        return try Database(name: name, config: config)
    }

    private func freshRaw(_ name: String) -> RawSQLite {
        RawSQLite(path: (directory as NSString).appendingPathComponent("\(name).sqlite3"))
    }

    func run() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bodies = samples.map(\.json)
        // Each side starts from its natural input, built before timing: raw SQLite from serialized bodies,
        // Couchette from property dictionaries.
        let properties = samples.map(\.properties)
        let averageSize = bodies.reduce(0) { $0 + $1.count } / max(bodies.count, 1)
        print("# \(count) documents of ~\(averageSize) bytes")
        if ProcessInfo.processInfo.environment["BENCH_ONLY"] == "batched" {
            // For profiling: only Couchette's batched inserts, then (BENCH_PROFILE_UPDATES=1) the update pass, timed.
            let db = try freshDatabase("profile")
            let collection = try db.defaultCollection()
            // BENCH_PROFILE_SINGLE=1: one transaction per document instead.
            let batch = ProcessInfo.processInfo.environment["BENCH_PROFILE_SINGLE"] == nil ? 1_000 : 1
            for start in stride(from: 0, to: count, by: batch) {
                try db.inBatch {
                    for index in start..<min(start + batch, count) {
                        try collection.save(document: MutableDocument(id: samples[index].id, data: properties[index]))
                    }
                }
            }
            if ProcessInfo.processInfo.environment["BENCH_PROFILE_READS"] != nil {
                // Random reads by ID, as lite.read.byid makes them.
                var found = 0
                let began = Date()
                for _ in 0..<count where try collection.document(id: samples.randomElement()!.id) != nil { found += 1 }
                print("# reads: \(Date().timeIntervalSince(began)) s, \(found) found")
            }
            if ProcessInfo.processInfo.environment["BENCH_PROFILE_UPDATES"] != nil {
                let began = Date()
                let before = Benchmark.processorSeconds()
                defer {
                    let after = Benchmark.processorSeconds()
                    let (user, system) = (after.user - before.user, after.system - before.system)
                    print("# updates: \(Date().timeIntervalSince(began)) s wall, user \(user) s, system \(system) s")
                }
                try updatePass(db, collection)
            }
            try db.close()
            return
        }
        // Memory first, before the timed phases leave freed heap behind for reuse.
        try reportPeakMemory(properties: properties)

        // Single-document transactions.
        let rawSingle = freshRaw("single")
        let rawSingleTime = Benchmark.timed {
            for (sample, body) in zip(samples, bodies) {
                rawSingle.execute("BEGIN")
                rawSingle.insert(id: sample.id, body: body)
                rawSingle.execute("COMMIT")
            }
        }
        let single = try freshDatabase("single")
        let singleCollection = try single.defaultCollection()
        let singleTime = try Benchmark.timed {
            for (sample, data) in zip(samples, properties) {
                try singleCollection.save(document: MutableDocument(id: sample.id, data: data))
            }
        }
        try single.close()
        Benchmark.report("lite.insert.single", baselineSeconds: rawSingleTime, measuredSeconds: singleTime, goal: ">=0.7")

        // Batches of 1,000, three rounds into fresh files, keeping each side's fastest (the machine is noisy).
        var raw = freshRaw("batched-0")
        var rawBatchedTime = Double.infinity
        var db = try freshDatabase("batched-0")
        var collection = try db.defaultCollection()
        var batchedTime = Double.infinity
        for round in 0..<3 {
            if round > 0 {
                raw = freshRaw("batched-\(round)")
                try db.close()
                db = try freshDatabase("batched-\(round)")
                collection = try db.defaultCollection()
            }
            let rawRound = raw
            rawBatchedTime = min(rawBatchedTime, Benchmark.timed {
                for start in stride(from: 0, to: count, by: 1_000) {
                    rawRound.execute("BEGIN")
                    for index in start..<min(start + 1_000, count) {
                        rawRound.insert(id: samples[index].id, body: bodies[index])
                    }
                    rawRound.execute("COMMIT")
                }
            })
            let (roundDB, roundCollection) = (db, collection)
            batchedTime = min(batchedTime, try Benchmark.timed {
                for start in stride(from: 0, to: count, by: 1_000) {
                    try roundDB.inBatch {
                        for index in start..<min(start + 1_000, count) {
                            try roundCollection.save(
                                document: MutableDocument(id: samples[index].id, data: properties[index]))
                        }
                    }
                }
            })
        }
        Benchmark.report("lite.insert.batched", baselineSeconds: rawBatchedTime, measuredSeconds: batchedTime, goal: ">=0.5")

        // Reads of random IDs.
        var generator = SystemRandomNumberGenerator()
        let order = (0..<count).map { _ in samples[Int.random(in: 0..<count, using: &generator)].id }
        var found = 0
        let rawReadTime = Benchmark.timed {
            for id in order where raw.read(id: id) != nil { found += 1 }
        }
        let readTime = try Benchmark.timed {
            for id in order where try collection.document(id: id) != nil { found += 1 }
        }
        precondition(found == 2 * count)
        Benchmark.report("lite.read.byid", baselineSeconds: rawReadTime, measuredSeconds: readTime, goal: ">=0.5")

        // Update passes in batches of 1,000: read, change one property, save. Three rounds of a raw pass then ours,
        // back to back, each flipping `complete` again, and the median round's ratio: a raw pass lasts ~0.6 s, and
        // this machine's speed wanders by more than the figure's margin within seconds.
        let updatedBodies = [true, false].map { flipped in
            samples.map { sample -> [UInt8] in
                var properties = sample.properties
                properties["complete"] = flipped != sample.complete
                return try! JSONValue(foundationObject: properties).serialized()
            }
        }
        var rounds: [(raw: Double, ours: Double)] = []
        for round in 0..<3 {
            let flipped = round % 2 == 0
            let rawUpdateTime = Benchmark.timed {
                for start in stride(from: 0, to: count, by: 1_000) {
                    raw.execute("BEGIN")
                    for index in start..<min(start + 1_000, count) {
                        _ = raw.read(id: samples[index].id)
                        raw.update(id: samples[index].id, body: updatedBodies[flipped ? 0 : 1][index])
                    }
                    raw.execute("COMMIT")
                }
            }
            let updateTime = try Benchmark.timed { try updatePass(db, collection, flipped: flipped) }
            rounds.append((rawUpdateTime, updateTime))
        }
        try db.close()
        let update = rounds.sorted { $0.raw / $0.ours < $1.raw / $1.ours }[rounds.count / 2]
        Benchmark.report("lite.update.batched", baselineSeconds: update.raw, measuredSeconds: update.ours, goal: ">=0.3")
    }

    /// An update pass: each document read, `complete` set (to the opposite of the sample's when `flipped`), saved;
    /// batches of 1,000.
    private func updatePass(_ db: Database, _ collection: Couchette.Collection, flipped: Bool = true) throws {
        for start in stride(from: 0, to: count, by: 1_000) {
            try db.inBatch {
                for index in start..<min(start + 1_000, count) {
                    let sample = samples[index]
                    guard let document = try collection.document(id: sample.id)?.toMutable() else { continue }
                    try collection.save(document: document.setBoolean(flipped != sample.complete, forKey: "complete"))
                }
            }
        }
    }

    /// How much the peak anonymous resident memory (``PeakMemory``) rises above its level at the start while
    /// inserting 10k and then 100k documents into fresh databases: it should not grow with the count.
    private func reportPeakMemory(properties: [[String: Any]]) throws {
        var peaks: [Int: Double] = [:]
        for size in [min(10_000, count), count] {
            let (_, rise) = try PeakMemory.rise {
                let db = try freshDatabase("memory-\(size)")
                let collection = try db.defaultCollection()
                for start in stride(from: 0, to: size, by: 1_000) {
                    try db.inBatch {
                        for index in start..<min(start + 1_000, size) {
                            try collection.save(document: MutableDocument(id: samples[index].id, data: properties[index]))
                        }
                    }
                }
                try db.close()
            }
            guard let rise else {
                print("# peak memory: not measurable here (/proc/self/status)")
                return
            }
            peaks[size] = rise
            print("BENCH lite.memory.peak.\(size / 1_000)k \(Benchmark.format(rise))MB info")
        }
        if let small = peaks[min(10_000, count)], let large = peaks[count], small > 0 {
            print("BENCH lite.memory.growth \(Benchmark.format(large / small)) <=1.5")
        }
    }
}
