import Dispatch
import Testing

@testable import CouchetteSQLite

@Suite("Concurrency", .timeLimit(.minutes(5)))
struct ConcurrencyTests {
    @Test("One connection shared by several threads serialises transactions")
    func sharedConnection() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (thread INTEGER, n INTEGER)")

            let threads = 4
            let perThread = 50
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for n in 0..<perThread {
                    do {
                        try connection.transaction { db in
                            try db.execute("INSERT INTO t VALUES (?, ?)", thread, n)
                            // Read back inside the transaction: no other thread interleaves.
                            let count = try db.firstValue("SELECT count(*) FROM t WHERE thread = ?", thread)
                            #expect(count == .integer(Int64(n + 1)))
                        }
                        _ = try connection.query("SELECT count(*) FROM t")
                    } catch {
                        Issue.record(error)
                    }
                }
            }
            #expect(try connection.firstValue("SELECT count(*) FROM t") == .integer(Int64(threads * perThread)))
        }
    }

    @Test("Two connections to the same file write from two threads with busy waits")
    func twoConnections() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path()
            let setup = try Connection(path: path)
            defer { setup.close() }
            try setup.execute("CREATE TABLE t (a)")
            let connections = [try Connection(path: path), try Connection(path: path)]
            defer { connections.forEach { $0.close() } }

            DispatchQueue.concurrentPerform(iterations: connections.count) { index in
                for n in 0..<50 {
                    do {
                        try connections[index].transaction { db in
                            try db.execute("INSERT INTO t VALUES (?)", index * 1000 + n)
                        }
                    } catch {
                        Issue.record(error)
                    }
                }
            }
            #expect(try setup.firstValue("SELECT count(*) FROM t") == 100)
        }
    }
}
