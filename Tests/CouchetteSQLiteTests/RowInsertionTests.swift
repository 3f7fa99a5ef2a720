import Testing

@testable import CouchetteSQLite

@Suite("Multi-row inserts", .timeLimit(.minutes(5)))
struct RowInsertionTests {
    @Test(
        "Every row is inserted once, in order, whatever the count",
        arguments: [0, 1, 3, 4, 5, 16, 17, 21, 63, 64, 65, 100, 300])
    func everyRowInOrder(count: Int) throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (name TEXT NOT NULL, number INTEGER NOT NULL, flag INTEGER)")
        let rows = (0..<count).map { (name: "row \($0)", number: Int64($0 * 7), flag: $0 % 2 == 0) }
        try connection.insert(rows, into: "t (name, number, flag)", columns: 3) { row, statement, first in
            try statement.bind(row.name, at: first)
            try statement.bind(row.number, at: first + 1)
            try statement.bind(row.flag, at: first + 2)
        }
        let stored = try connection.query("SELECT name, number, flag FROM t ORDER BY rowid")
        #expect(stored.count == count)
        for (row, expected) in zip(stored, rows) {
            #expect(row[0] == .text(expected.name))
            #expect(row[1] == .integer(expected.number))
            #expect(row[2] == .integer(expected.flag ? 1 : 0))
        }
    }

    @Test("Wide rows take fewer rows per statement and stay within SQLite's parameter limit")
    func wideRows() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let columns = 40
        let names = (0..<columns).map { "c\($0)" }
        try connection.execute("CREATE TABLE wide (\(names.joined(separator: ", ")))")
        try connection.insert(Array(0..<70), into: "wide (\(names.joined(separator: ", ")))", columns: columns) {
            row, statement, first in
            for column in 0..<columns { try statement.bind(Int64(row * 1000 + column), at: first + column) }
        }
        #expect(try connection.firstValue("SELECT count(*) FROM wide") == .integer(70))
        #expect(try connection.firstValue("SELECT sum(c39) FROM wide") == .integer(Int64((0..<70).reduce(0) { $0 + $1 * 1000 + 39 })))
    }

    @Test("A refused row fails the insert, and its transaction can roll everything back")
    func refusedRow() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (key TEXT PRIMARY KEY)")
        let keys = (0..<80).map { "k\($0)" } + ["k3"]
        #expect(throws: SQLiteError.self) {
            try connection.transaction { connection in
                try connection.insert(keys, into: "t (key)", columns: 1) { key, statement, first in
                    try statement.bind(key, at: first)
                }
            }
        }
        #expect(try connection.firstValue("SELECT count(*) FROM t") == .integer(0))
        #expect(throws: SQLiteError.self) {
            try connection.insert(keys, into: "t (key)", columns: 0) { _, _, _ in }
        }
    }
}
