import Couchette
import Foundation

/// The cost of encryption: the Lite workloads on an encrypted database (raw key) against the same on a plain one,
/// in the same run — batched inserts (`encryption.insert-overhead`, goal ≤ 1.15) and reads of random IDs from a
/// freshly opened database (`encryption.read-overhead`, goal ≤ 1.15) — and the time to create an encrypted
/// database with a password (PBKDF2, 256,000 rounds) and with a raw key.
struct EncryptionBenchmark {
    let count: Int

    func run() throws {
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-enc-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# encryption: \(count) documents")
        let ids = (0..<count).map { _ in "user1.\(UUID().uuidString)" }
        let properties: [[String: Any]] = (0..<count).map { index in
            [
                "type": "task", "task": "Task \(index): " + String(repeating: "x", count: 40 + index % 80),
                "priority": index % 5, "complete": index % 2 == 0, "taskList": ["id": "user1.\(index % 100)"],
            ]
        }
        let key = EncryptionKey.key(Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        func configuration(_ key: EncryptionKey?) -> DatabaseConfiguration {
            var config = DatabaseConfiguration()
            config.directory = directory
            config.encryptionKey = key
            return config
        }

        var insert: [Bool: Double] = [:]
        var read: [Bool: Double] = [:]
        let order = ids.shuffled()
        // Alternating sides, best of four rounds each, so that machine noise (which only adds time) hits both alike.
        for round in 0..<4 {
            for encrypted in [false, true] {
                let name = "\(encrypted ? "secret" : "plain")-\(round)"
                let config = configuration(encrypted ? key : nil)
                let db = try Database(name: name, config: config)
                let collection = try db.defaultCollection()
                let inserting = try Benchmark.timed {
                    for first in stride(from: 0, to: count, by: 1_000) {
                        try db.inBatch {
                            for index in first..<min(first + 1_000, count) {
                                _ = try collection.putProperties(properties[index], documentID: ids[index])
                            }
                        }
                    }
                }
                try db.close()
                let reopened = try Database(name: name, config: config)
                let reading = try Benchmark.timed {
                    let collection = try reopened.defaultCollection()
                    for id in order {
                        guard try collection.document(id: id) != nil else {
                            throw CouchetteError(.corrupt, message: "\(id) is missing")
                        }
                    }
                }
                try reopened.close()
                if ProcessInfo.processInfo.environment["BENCH_VERBOSE"] != nil {
                    print("# round \(round) \(encrypted ? "encrypted" : "plain"): insert \(Benchmark.format(inserting * 1000)) ms, read \(Benchmark.format(reading * 1000)) ms")
                }
                insert[encrypted] = min(insert[encrypted] ?? .infinity, inserting)
                read[encrypted] = min(read[encrypted] ?? .infinity, reading)
            }
        }
        report("encryption.insert-overhead", plain: insert[false]!, encrypted: insert[true]!, goal: "<=1.15")
        report("encryption.read-overhead", plain: read[false]!, encrypted: read[true]!, goal: "<=1.15")

        let withPassword = try Benchmark.timed {
            try Database(name: "opened-password", config: configuration(.password("correct horse battery"))).close()
        }
        let withKey = try Benchmark.timed { try Database(name: "opened-key", config: configuration(key)).close() }
        print("BENCH encryption.open-password-ms \(Benchmark.format(withPassword * 1000)) info")
        print("BENCH encryption.open-key-ms \(Benchmark.format(withKey * 1000)) info")
    }

    /// Prints encrypted time ÷ plain time (lower is better).
    private func report(_ figure: String, plain: Double, encrypted: Double, goal: String) {
        print("# \(figure): plain \(Benchmark.format(plain * 1000)) ms, encrypted \(Benchmark.format(encrypted * 1000)) ms")
        print("BENCH \(figure) \(Benchmark.format(encrypted / plain)) \(goal)")
    }

}
