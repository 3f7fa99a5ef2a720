import Testing

@testable import CouchetteSQLite

@Suite("Busy handling", .timeLimit(.minutes(5)))
struct BusyTests {
    @Test("A writer blocked by another connection's transaction gets SQLITE_BUSY, then succeeds")
    func busyThenSuccess() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path()
            let holder = try Connection(path: path)
            defer { holder.close() }
            try holder.execute("CREATE TABLE t (a)")
            let waiter = try Connection(path: path, options: .init(busyTimeout: .milliseconds(50)))
            defer { waiter.close() }

            // Everything runs in sequence on this thread: no sleeps, no races.
            try holder.execute("BEGIN IMMEDIATE")
            try holder.execute("INSERT INTO t VALUES (?)", "holder")

            let error = try #require(throws: SQLiteError.self) {
                try waiter.execute("INSERT INTO t VALUES (?)", "waiter")
            }
            #expect(error.primaryCode == .busy)
            #expect(error.status == 503)
            #expect(try #require(throws: SQLiteError.self) { try waiter.transaction { _ in } }.status == 503)
            #expect(try waiter.isInTransaction == false)
            // Readers are not blocked in WAL mode; they see the last commit.
            #expect(try waiter.firstValue("SELECT count(*) FROM t") == 0)

            try holder.execute("COMMIT")

            try waiter.execute("INSERT INTO t VALUES (?)", "waiter")
            let values = try waiter.query("SELECT a FROM t ORDER BY rowid").map { $0[0] }
            #expect(values == ["holder", "waiter"])
        }
    }
}
