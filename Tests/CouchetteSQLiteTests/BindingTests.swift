import Foundation
import Testing

@testable import CouchetteSQLite

@Suite("Binding", .timeLimit(.minutes(5)))
struct BindingTests {
    @Test("Named parameters bind with or without their prefix")
    func namedParameters() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            try connection.execute("CREATE TABLE docs (id TEXT PRIMARY KEY, seq INTEGER, body BLOB)")
            try connection.execute(
                "INSERT INTO docs (id, seq, body) VALUES (:id, :seq, :body)",
                named: ["id": "doc1", ":seq": 7, "body": Data([1, 2])])
            try connection.execute(
                "INSERT INTO docs (id, seq, body) VALUES (@id, $seq, :body)",
                named: ["@id": "doc2", "$seq": 8, "body": nil])

            let rows = try connection.query("SELECT id, seq, body FROM docs WHERE seq >= :min ORDER BY seq", named: ["min": 7])
            #expect(rows.map(\.values) == [
                [.text("doc1"), .integer(7), .blob([1, 2])],
                [.text("doc2"), .integer(8), .null],
            ])

            let statement = try connection.makeStatement(sql: "SELECT :a + :b, :a")
            #expect(try statement.parameterIndex(named: "a") == 1)
            #expect(try statement.parameterIndex(named: ":b") == 2)
            #expect(statement.parameterCount == 2)
            try statement.bind(40, named: "a")
            try statement.bind(2, named: ":b")
            #expect(try statement.step())
            #expect(statement.int64(at: 0) == 42)
            #expect(statement.int64(at: 1) == 40)
        }
    }

    @Test("An unknown parameter name is a range error")
    func unknownName() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let error = try #require(throws: SQLiteError.self) {
            try connection.query("SELECT :a", named: ["b": 1])
        }
        #expect(error.primaryCode == .range)
        #expect(error.sql == "SELECT :a")
    }

    @Test("The number of positional arguments must match the parameters")
    func argumentCount() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        #expect(throws: SQLiteError.self) { try connection.query("SELECT ?, ?", 1) }
        #expect(throws: SQLiteError.self) { try connection.query("SELECT ?", 1, 2) }
        #expect(throws: SQLiteError.self) { try connection.query("SELECT ?") }
        let error = try #require(throws: SQLiteError.self) { try connection.firstRow("SELECT ?", 1, 2) }
        #expect(error.primaryCode == .range)
        #expect(try connection.query("SELECT ?, ?", 1, nil).first?.values == [.integer(1), .null])
    }

    @Test("Array arguments and bind(arguments:)")
    func arrayArguments() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let arguments: [(any SQLiteBindable)?] = [1, "two", 3.0, nil, [UInt8]([4])]
        let rows = try connection.query("SELECT ?, ?, ?, ?, ?", arguments: arguments)
        #expect(rows.first?.values == [.integer(1), .text("two"), .real(3), .null, .blob([4])])

        let optionals: [Int?] = [5, nil]
        let statement = try connection.makeStatement(sql: "SELECT ?, ?")
        try statement.bind(arguments: optionals)
        #expect(try statement.firstRow()?.values == [.integer(5), .null])
    }

    @Test("An out-of-range index is a range error")
    func indexOutOfRange() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let statement = try connection.makeStatement(sql: "SELECT ?")
        let error = try #require(throws: SQLiteError.self) { try statement.bind(1, at: 2) }
        #expect(error.primaryCode == .range)
        #expect(throws: SQLiteError.self) { try statement.bind(1, at: 0) }
    }
}
