import Testing

@testable import CouchetteSQLite

@Suite("Statement cache", .timeLimit(.minutes(5)))
struct StatementCacheTests {
    @Test("The cache returns the same statement, reset and with bindings cleared")
    func sameStatement() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (a)")
            let sql = "INSERT INTO t (a) VALUES (?)"

            let first = try connection.cachedStatement(sql: sql)
            try first.bind("one", at: 1)
            try first.execute()

            let second = try connection.cachedStatement(sql: sql)
            #expect(first === second)
            // Bindings were cleared: running it again inserts NULL.
            try second.execute()
            try second.bind("three", at: 1)
            try second.execute()

            let values = try connection.query("SELECT a FROM t ORDER BY rowid").map { $0[0] }
            #expect(values == [.text("one"), .null, .text("three")])
            #expect(try connection.makeStatement(sql: sql) !== first)
        }
    }

    @Test("A statement key finds its own cached statement by identity: reused, reset, apart from its text's")
    func keyedStatements() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1), (2), (3);")
        let sql = "SELECT a FROM t ORDER BY a"
        let key = StatementKey(sql)

        let first = try connection.cachedStatement(key)
        #expect(try first.step())
        let again = try connection.cachedStatement(key)
        // Still running: a fresh one, as for text.
        #expect(again !== first)
        first.reset()
        #expect(try connection.cachedStatement(key) === first)
        #expect(try connection.cachedStatement(key).rows().map { $0[0] } == [1, 2, 3])
        // Another key with the same text, and the text itself, have statements of their own.
        #expect(try connection.cachedStatement(StatementKey(sql)) !== first)
        #expect(try connection.cachedStatement(sql: sql) !== first)
    }

    @Test("A cached query can be abandoned mid-iteration and reused from the start")
    func resetBeforeReuse() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1), (2), (3);")
        let sql = "SELECT a FROM t ORDER BY a"

        let statement = try connection.cachedStatement(sql: sql)
        #expect(try statement.step())
        #expect(statement.int64(at: 0) == 1)

        let again = try connection.cachedStatement(sql: sql)
        // The first one was still running, so the cache handed out a fresh statement.
        #expect(again !== statement)
        #expect(try again.rows().map { $0[0] } == [1, 2, 3])

        statement.reset()
        let reused = try connection.cachedStatement(sql: sql)
        #expect(reused === statement)
        #expect(try reused.rows().map { $0[0] } == [1, 2, 3])
    }

    @Test("Helpers reuse cached statements, also when nested in a row callback")
    func helpersUseCache() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (a); INSERT INTO t VALUES (1), (2), (3);")
        let sql = "SELECT a FROM t WHERE a >= ? ORDER BY a"
        for minimum in 1...3 {
            #expect(try connection.query(sql, minimum).count == 4 - minimum)
        }
        let cached = try connection.cachedStatement(sql: sql)
        #expect(cached.isBusy == false)

        var pairs: [String] = []
        try connection.forEachRow(sql, 2) { outer in
            let a = outer.int64(at: 0)
            // Same SQL while the outer iteration runs: the outer statement is not disturbed.
            for inner in try connection.query(sql, a) {
                pairs.append("\(a)-\(inner[0].int64Value ?? 0)")
            }
        }
        #expect(pairs == ["2-2", "2-3", "3-3"])
        #expect(try connection.cachedStatement(sql: sql) === cached)
    }

    @Test("Clearing the cache keeps statements held elsewhere working")
    func clearCache() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let statement = try connection.cachedStatement(sql: "SELECT 1")
        connection.clearStatementCache()
        #expect(try statement.firstRow()?[0] == 1)
        #expect(try connection.cachedStatement(sql: "SELECT 1") !== statement)
    }
}
