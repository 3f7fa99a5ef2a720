import Testing

@testable import CouchetteSQLite

/// An error thrown by test bodies, to check which error comes out.
private struct Abort: Error, Equatable {
    var reason: String
}

@Suite("Transactions and savepoints", .timeLimit(.minutes(5)))
struct TransactionTests {
    private func makeConnection(_ directory: TemporaryDirectory) throws -> Connection {
        let connection = try Connection(path: directory.path())
        try connection.execute("CREATE TABLE t (a TEXT)")
        return connection
    }

    private func values(_ connection: Connection) throws -> [String] {
        try connection.query("SELECT a FROM t ORDER BY rowid").compactMap { $0[0].stringValue }
    }

    @Test("A transaction commits when its body returns", arguments: Connection.TransactionKind.allCases)
    func commit(kind: Connection.TransactionKind) throws {
        try withTemporaryDirectory { directory in
            let connection = try makeConnection(directory)
            defer { connection.close() }
            let rowID = try connection.transaction(kind) { db in
                #expect(try db.isInTransaction)
                try db.execute("INSERT INTO t VALUES (?)", "committed")
                return try db.lastInsertRowID
            }
            #expect(rowID == 1)
            #expect(try connection.isInTransaction == false)
            #expect(try values(connection) == ["committed"])

            // Visible to another connection: it is on disk.
            let other = try Connection(path: directory.path())
            defer { other.close() }
            #expect(try values(other) == ["committed"])
        }
    }

    @Test("A transaction rolls back when its body throws, and rethrows that error")
    func rollback() throws {
        try withTemporaryDirectory { directory in
            let connection = try makeConnection(directory)
            defer { connection.close() }
            #expect(throws: Abort(reason: "body")) {
                try connection.transaction { db in
                    try db.execute("INSERT INTO t VALUES (?)", "rolled back")
                    throw Abort(reason: "body")
                }
            }
            #expect(try connection.isInTransaction == false)
            #expect(try values(connection) == [])
        }
    }

    @Test("The body's error wins when the rollback itself fails")
    func firstErrorWins() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (a)")
        #expect(throws: Abort(reason: "first")) {
            try connection.transaction { db in
                try db.execute("INSERT INTO t VALUES (?)", 1)
                // The transaction is gone: the wrapper's own rollback has nothing to do.
                try db.execute("ROLLBACK")
                throw Abort(reason: "first")
            }
        }
        #expect(throws: Abort(reason: "first")) {
            try connection.savepoint { db in
                try db.execute("ROLLBACK")
                throw Abort(reason: "first")
            }
        }
        #expect(try connection.isInTransaction == false)
        #expect(try connection.firstValue("SELECT count(*) FROM t") == 0)
    }

    @Test("A failed commit rolls back and throws the commit error")
    func failedCommit() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("""
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        let error = try #require(throws: SQLiteError.self) {
            try connection.transaction { db in
                try db.execute("INSERT INTO child VALUES (?)", 1)  // checked at COMMIT
            }
        }
        #expect(error.primaryCode == .constraint)
        #expect(error.sql == "COMMIT TRANSACTION")
        #expect(try connection.isInTransaction == false)
        #expect(try connection.firstValue("SELECT count(*) FROM child") == 0)
    }

    @Test("Nested savepoints: the inner one rolls back, the outer one commits")
    func nestedSavepoints() throws {
        try withTemporaryDirectory { directory in
            let connection = try makeConnection(directory)
            defer { connection.close() }
            try connection.savepoint { db in
                #expect(try db.isInTransaction)
                try db.execute("INSERT INTO t VALUES (?)", "outer")
                #expect(throws: Abort(reason: "inner")) {
                    try db.savepoint { db in
                        try db.execute("INSERT INTO t VALUES (?)", "inner")
                        try db.savepoint { db in
                            try db.execute("INSERT INTO t VALUES (?)", "innermost")
                        }
                        #expect(try values(db) == ["outer", "inner", "innermost"])
                        throw Abort(reason: "inner")
                    }
                }
                try db.execute("INSERT INTO t VALUES (?)", "after")
            }
            #expect(try connection.isInTransaction == false)
            #expect(try values(connection) == ["outer", "after"])
        }
    }

    @Test("Savepoints nest inside a transaction")
    func savepointInTransaction() throws {
        try withTemporaryDirectory { directory in
            let connection = try makeConnection(directory)
            defer { connection.close() }
            try connection.transaction { db in
                try db.execute("INSERT INTO t VALUES (?)", "a")
                try db.savepoint { db in try db.execute("INSERT INTO t VALUES (?)", "b") }
                try? db.savepoint { db in
                    try db.execute("INSERT INTO t VALUES (?)", "c")
                    throw Abort(reason: "c")
                }
                #expect(try db.isInTransaction)
            }
            #expect(try values(connection) == ["a", "b"])

            // A transaction cannot nest in a transaction: SQLite says so.
            let error = try #require(throws: SQLiteError.self) {
                try connection.transaction { db in try db.transaction { _ in } }
            }
            #expect(error.primaryCode == .error)
            #expect(try connection.isInTransaction == false)
        }
    }
}
