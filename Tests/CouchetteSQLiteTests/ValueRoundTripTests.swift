import Foundation
import Testing

@testable import CouchetteSQLite

@Suite("Value round trips", .timeLimit(.minutes(5)))
struct ValueRoundTripTests {
    static let values: [SQLiteValue] = [
        .null,
        .integer(0),
        .integer(-1),
        .integer(Int64.max),
        .integer(Int64.min),
        .integer(1 << 53 + 1),
        .real(0),
        .real(-1.5),
        .real(Double.pi),
        .real(Double.greatestFiniteMagnitude),
        .real(-Double.leastNonzeroMagnitude),
        .text(""),
        .text("plain ascii"),
        .text("héllo wörld – 日本語 – 🇫🇷👩‍👩‍👧 – ﷽"),
        .text("embedded\u{0}NUL\u{0}"),
        .blob([]),
        .blob([0]),
        .blob([0, 0, 0, 0]),
        .blob([0, 1, 0, 255, 0x80, 0xC3, 0x28]),
    ]

    @Test("Every value survives a trip through a table in a real file", arguments: values)
    func roundTripThroughFile(_ value: SQLiteValue) throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
            try connection.execute("INSERT INTO t (v) VALUES (?)", value)
            let row = try #require(try connection.firstRow("SELECT v FROM t"))
            #expect(row[0] == value)
            #expect(row["v"] == value)
        }
    }

    @Test("Every value survives binding and reading with the typed API", arguments: values)
    func roundTripThroughStatement(_ value: SQLiteValue) throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let statement = try connection.makeStatement(sql: "SELECT ?")
        try statement.bind(value, at: 1)
        #expect(try statement.step())
        #expect(statement.value(at: 0) == value)
        #expect(statement.isNull(at: 0) == value.isNull)
        switch value {
        case .null:
            #expect(statement.int64(at: 0) == 0)
            #expect(statement.string(at: 0) == "")
            #expect(statement.blob(at: 0) == [])
        case .integer(let integer):
            #expect(statement.int64(at: 0) == integer)
            #expect(statement.int(at: 0) == Int(integer))
        case .real(let real):
            #expect(statement.double(at: 0) == real)
        case .text(let text):
            #expect(statement.string(at: 0) == text)
            #expect(statement.string(at: 0).utf8.count == text.utf8.count)
        case .blob(let bytes):
            #expect(statement.blob(at: 0) == bytes)
            #expect(statement.data(at: 0) == Data(bytes))
        }
        #expect(try statement.step() == false)
    }

    @Test("A large blob with zero bytes and a large text survive a round trip")
    func largeValues() throws {
        try withTemporaryDirectory { directory in
            let connection = try Connection(path: directory.path())
            defer { connection.close() }
            let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let text = String(repeating: "é\u{0}🌍", count: 50_000)
            try connection.execute("CREATE TABLE t (b BLOB, s TEXT)")
            try connection.execute("INSERT INTO t VALUES (?, ?)", Data(bytes), text)
            let row = try #require(try connection.firstRow("SELECT b, s, length(b) FROM t"))
            #expect(row[0].blobValue == bytes)
            #expect(row[1].stringValue == text)
            #expect(row[2] == .integer(300_000))
        }
    }

    @Test("Swift types bind to the expected storage class")
    func swiftTypes() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (i, i64, i32, d, b, s, bytes, data, n)")
        let none: String? = nil
        try connection.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            Int.min, Int64.max, Int32(-7), 2.5, true, "texte", [UInt8]([0, 1, 2]), Data([0, 0]), none)
        let row = try #require(try connection.firstRow("SELECT * FROM t"))
        #expect(row.values == [
            .integer(Int64(Int.min)), .integer(Int64.max), .integer(-7), .real(2.5), .integer(1),
            .text("texte"), .blob([0, 1, 2]), .blob([0, 0]), .null,
        ])
        #expect(row.columnNames == ["i", "i64", "i32", "d", "b", "s", "bytes", "data", "n"])
        #expect(row["I64"] == .integer(Int64.max))
        #expect(row["missing"] == nil)

        let types = try connection.firstRow(
            "SELECT typeof(i), typeof(d), typeof(b), typeof(s), typeof(bytes), typeof(data), typeof(n) FROM t")
        #expect(types?.values.compactMap(\.stringValue) == ["integer", "real", "integer", "text", "blob", "blob", "null"])
    }

    @Test("Empty blobs and empty strings are not NULL")
    func emptyIsNotNull() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        let statement = try connection.makeStatement(sql: "SELECT ? IS NULL, typeof(?), ? IS NULL, typeof(?), length(?)")
        try statement.bind([UInt8](), at: 1)
        try statement.bind(Data(), at: 2)
        try statement.bind("", at: 3)
        try statement.bind("", at: 4)
        try statement.bind(Data([0, 0, 0]), at: 5)
        #expect(try statement.step())
        #expect(statement.bool(at: 0) == false)
        #expect(statement.string(at: 1) == "blob")
        #expect(statement.bool(at: 2) == false)
        #expect(statement.string(at: 3) == "text")
        #expect(statement.int(at: 4) == 3)
    }

    @Test("Typed statement getters read columns by index and name")
    func typedGetters() throws {
        let connection = try Connection(path: ":memory:")
        defer { connection.close() }
        var seen: [String] = []
        try connection.forEachRow(
            "SELECT value AS n, 'row ' || value AS label FROM json_each(?) WHERE value > ?", "[1,2,3]", 1
        ) { row in
            #expect(row.columnCount == 2)
            #expect(row.columnNames == ["n", "label"])
            seen.append("\(row.int(at: 0)):\(row.string(at: 1))")
        }
        #expect(seen == ["2:row 2", "3:row 3"])
    }
}
