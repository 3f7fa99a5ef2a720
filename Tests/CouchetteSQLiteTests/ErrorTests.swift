import Testing

@testable import CouchetteSQLite

@Suite("Errors", .timeLimit(.minutes(5)))
struct ErrorTests {
    @Test("A UNIQUE violation is a constraint error with the message and no bound value")
    func uniqueViolation() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            try connection.execute("CREATE TABLE users (name TEXT UNIQUE, secret TEXT)")
            let sql = "INSERT INTO users (name, secret) VALUES (?, ?)"
            try connection.execute(sql, "alice", "hunter2-first")

            let error = try #require(throws: SQLiteError.self) {
                try connection.execute(sql, "alice", "hunter2-second")
            }
            #expect(error.primaryCode == .constraint)
            #expect(error.resultCode == .constraintUnique)
            #expect(error.code == 2067)
            #expect(error.message.contains("UNIQUE constraint failed: users.name"))
            #expect(error.sql == sql)
            #expect(error.status == 409)
            #expect(error.description.contains("UNIQUE constraint failed"))
            #expect(error.description.contains(sql))
            #expect(!error.description.contains("alice"))
            #expect(!error.description.contains("hunter2"))
            #expect(!error.localizedDescription.contains("hunter2"))

            // The failed statement is reusable from the cache.
            try connection.execute(sql, "bob", "x")
            #expect(try connection.firstValue("SELECT count(*) FROM users") == 2)
        }
    }

    @Test("Errors match result codes in catch clauses: primary codes match their family")
    func patternMatching() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (a NOT NULL)")

        var matched = ""
        do {
            try connection.execute("INSERT INTO t VALUES (?)", nil)
        } catch SQLiteResultCode.busy {
            matched = "busy"
        } catch SQLiteResultCode.constraintUnique {
            matched = "unique"
        } catch SQLiteResultCode.constraint {
            matched = "constraint"
        }
        #expect(matched == "constraint")

        #expect(SQLiteResultCode.constraint ~= .constraintNotNull)
        #expect(SQLiteResultCode.constraintNotNull ~= .constraintNotNull)
        #expect(!(SQLiteResultCode.constraintUnique ~= .constraintNotNull))
        #expect(!(SQLiteResultCode.constraintUnique ~= .constraint))
        #expect(!(SQLiteResultCode.busy ~= (CancellationError() as any Error)))
        #expect(SQLiteResultCode.constraintNotNull.primary == .constraint)
        #expect(SQLiteResultCode.constraintNotNull.isPrimary == false)
    }

    @Test("A syntax error names the SQL")
    func syntaxError() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let sql = "SELEKT * FROM nowhere"
        let error = try #require(throws: SQLiteError.self) { try connection.query(sql) }
        #expect(error.primaryCode == .error)
        #expect(error.sql == sql)
        #expect(error.message.contains("syntax error"))
        #expect(error.description.contains(sql))
        #expect(error.status == 500)

        let script = "CREATE TABLE a (x); CREATE TABLE a (x);"
        let scriptError = try #require(throws: SQLiteError.self) { try connection.execute(script) }
        #expect(scriptError.sql == script)
        #expect(scriptError.message.contains("already exists"))
    }

    @Test("Empty SQL is refused")
    func emptySQL() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let error = try #require(throws: SQLiteError.self) { try connection.makeStatement(sql: "  -- nothing") }
        #expect(error.primaryCode == .misuse)
    }

    @Test(
        "Primary codes map to HTTP statuses",
        arguments: [
            (SQLiteResultCode.constraint, 409), (.constraintUnique, 409), (.constraintForeignKey, 409),
            (.busy, 503), (.busySnapshot, 503), (.locked, 503),
            (.notADatabase, 401),
            (.readOnly, 403), (.permission, 403), (.auth, 403),
            (.cantOpen, 404), (.tooBig, 413), (.full, 507),
            (.misuse, 500), (.error, 500), (.ioError, 500), (.corrupt, 500), (.noMemory, 500),
        ])
    func httpStatus(code: SQLiteResultCode, status: Int) {
        #expect(SQLiteError(code).status == status)
    }

    @Test("The description holds code, message and SQL")
    func description() {
        let error = SQLiteError(code: 5, message: "database is locked", sql: "BEGIN IMMEDIATE")
        #expect(error.description == "SQLite error 5 (database is locked): database is locked - while executing `BEGIN IMMEDIATE`")
        #expect(SQLiteError.connectionClosed().description == "SQLite error 21 (bad parameter or other API misuse): connection is closed")
    }
}
