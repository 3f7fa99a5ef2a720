import CSQLite
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

    @Test("A connection in multi-thread mode has no SQLite mutex and serialises through its own lock")
    func multiThreadMode() throws {
        try withTemporaryDirectory { directory in
            let serialized = try Connection(path: directory.path("a.sqlite"))
            defer { serialized.close() }
            #expect(serialized.hasSQLiteMutex)
            let connection = try Connection(
                path: directory.path("b.sqlite"), options: Connection.Options(threadingMode: .multiThread))
            defer { connection.close() }
            #expect(!connection.hasSQLiteMutex)
            try connection.execute("CREATE TABLE t (thread INTEGER, n INTEGER)")
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for n in 0..<50 {
                    do {
                        try connection.transaction { db in
                            try db.execute("INSERT INTO t VALUES (?, ?)", thread, n)
                            let count = try db.firstValue("SELECT count(*) FROM t WHERE thread = ?", thread)
                            #expect(count == .integer(Int64(n + 1)))
                        }
                        // A statement made and released on this thread while others use the connection: its
                        // finalization takes the connection's lock.
                        try connection.withExclusiveAccess { db in
                            let statement = try db.makeStatement(
                                sql: "SELECT n FROM t WHERE thread = ? ORDER BY n DESC")
                            try statement.bind(thread, at: 1)
                            #expect(try statement.step())
                            #expect(statement.int(at: 0) == n)
                        }
                    } catch {
                        Issue.record(error)
                    }
                }
            }
            #expect(try connection.firstValue("SELECT count(*) FROM t") == 200)
        }
    }

    @Test("Opening a connection turns SQLite's memory statistics off for the process")
    func memoryStatisticsOff() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path("a.sqlite"))
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (a); INSERT INTO t VALUES (zeroblob(100000))")
            // Nothing else in the test process opens SQLite first, so the first connection's call took effect, and
            // SQLite counts no allocation.
            #expect(Connection.turnOffMemoryStatistics())
            #expect(sqlite3_memory_used() == 0)
        }
    }
}
