import Couchette
import Foundation

/// `lite.read.during-writes`: random `document(id:)` reads while another thread saves batches of 1,000 documents
/// without pause ÷ the same reads on the idle database. Reads run on the reader connections beside the writer, so
/// they neither wait for the batches nor see half of one.
struct ReadDuringWritesBenchmark {
    let count: Int

    func run() throws {
        let folder = NSTemporaryDirectory() + "couchette-bench-reads-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var config = DatabaseConfiguration()
        config.directory = folder
        let db = try Database(name: "reads", config: config)
        let tasks = try db.defaultCollection()
        let documents = max(count / 2, 1_000)
        for start in stride(from: 0, to: documents, by: 1_000) {
            try db.inBatch {
                for index in start..<min(start + 1_000, documents) {
                    try tasks.save(document: MutableDocument(id: "task-\(index)", data: Self.task(index)))
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<count).map { _ in "task-\(Int.random(in: 0..<documents, using: &generator))" }
        func readAll() throws {
            for id in ids {
                let document = try tasks.document(id: id)
                precondition(document != nil)
            }
        }
        try readAll()  // warm: the reader connections open, the pages are cached
        let idle = try Benchmark.timed(readAll)

        let stop = Stop()
        let writerEnded = DispatchSemaphore(value: 0)
        let writer = Thread {
            var batch = 0
            while !stop.requested {
                try? db.inBatch {
                    for index in 0..<1_000 {
                        try tasks.save(document: MutableDocument(id: "new-\(batch)-\(index)", data: Self.task(index)))
                    }
                }
                batch += 1
            }
            stop.batches = batch
            writerEnded.signal()
        }
        writer.start()
        let busy = try Benchmark.timed(readAll)
        stop.requested = true
        writerEnded.wait()
        try db.close()
        print("# lite.read.during-writes: \(count) reads, \(stop.batches) batches of 1,000 saved meanwhile")
        Benchmark.report("lite.read.during-writes", baselineSeconds: idle, measuredSeconds: busy, goal: ">=0.7")
    }

    private static func task(_ index: Int) -> [String: Any] {
        [
            "type": "task", "task": "Task \(index)", "complete": index % 3 == 0, "createdAt": "2026-11-26T10:00:00Z",
            "taskList": ["id": "user1.list", "owner": "user1"],
        ]
    }

    /// Tells the writer thread to stop; counts what it did.
    private final class Stop: @unchecked Sendable {
        private let lock = NSLock()
        private var stopRequested = false
        var batches = 0
        var requested: Bool {
            get { lock.withLock { stopRequested } }
            set { lock.withLock { stopRequested = newValue } }
        }
    }
}
