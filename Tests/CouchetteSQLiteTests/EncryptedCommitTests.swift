import Foundation
import Testing

@testable import CouchetteSQLite

/// An encrypted database's WAL frames are gathered until the commit frame and then encrypted together (on several
/// threads) and written at once (`cipher_wal.c`). What must hold: a commit is readable by another connection as soon
/// as it returns; pages spilled in the middle of a transaction, rewritten in place, or rolled back leave the right
/// data; and the checksum chain over the written frames is what SQLite's recovery accepts, so a copy of the file and
/// its WAL (what a crash leaves) opens with every committed row.
@Suite("Encrypted commits", .timeLimit(.minutes(5)))
struct EncryptedCommitTests {
    static let key = Connection.EncryptionKey.raw((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) })

    /// The row text for `id` at `version`: long enough that a transaction of many rows writes hundreds of frames.
    static func text(_ id: Int, version: Int) -> String {
        "row \(id) v\(version) " + String(repeating: Character(UnicodeScalar(UInt8(97 + (id + version) % 26))), count: 300 + id % 200)
    }

    static func open(_ path: String) throws -> Connection {
        let connection = try Connection(path: path, options: .init(encryptionKey: key))
        try connection.execute("PRAGMA wal_autocheckpoint = 0")
        try connection.execute("PRAGMA synchronous = NORMAL")
        return connection
    }

    static func rows(_ connection: Connection) throws -> [Int: String] {
        var rows: [Int: String] = [:]
        for row in try connection.query("SELECT id, text FROM t") {
            rows[Int(row[0].int64Value ?? -1)] = row[1].stringValue
        }
        return rows
    }

    @Test("Large, spilled, rewritten and rolled-back transactions leave exactly the committed rows, also after a crash")
    func gatheredCommitsKeepEveryCommittedRow() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("source.sqlite")
            let writer = try Self.open(path)
            let other = try Self.open(path)
            try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)")
            var expected: [Int: String] = [:]

            // One transaction of 3,000 rows: ~350 frames in one commit, more than one batch.
            try writer.execute("BEGIN")
            for id in 0..<3_000 {
                try writer.execute("INSERT INTO t (id, text) VALUES (?, ?)", id, Self.text(id, version: 0))
                expected[id] = Self.text(id, version: 0)
            }
            try writer.execute("COMMIT")
            // Committed means readable elsewhere at once.
            #expect(try Self.rows(other) == expected)

            // A small page cache makes SQLite spill pages to the WAL in the middle of a transaction and later rewrite
            // them in place: updates of every third row, twice in one transaction. Pages read from the database file
            // (after a checkpoint) leave the spilled frames gathered, so some rewrites land on gathered frames.
            try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try writer.execute("PRAGMA cache_size = 20")
            try writer.execute("BEGIN")
            for version in 1...2 {
                for id in stride(from: 0, to: 3_000, by: 3) {
                    try writer.execute("UPDATE t SET text = ? WHERE id = ?", Self.text(id, version: version), id)
                    expected[id] = Self.text(id, version: version)
                }
            }
            try writer.execute("COMMIT")
            #expect(try Self.rows(other) == expected)

            // A transaction that spills and rolls back; then the other connection commits, then the writer again.
            try writer.execute("BEGIN")
            for id in 3_000..<4_000 { try writer.execute("INSERT INTO t (id, text) VALUES (?, ?)", id, Self.text(id, version: 9)) }
            try writer.execute("ROLLBACK")
            try other.execute("BEGIN")
            for id in 5_000..<5_300 {
                try other.execute("INSERT INTO t (id, text) VALUES (?, ?)", id, Self.text(id, version: 1))
                expected[id] = Self.text(id, version: 1)
            }
            try other.execute("COMMIT")
            for id in 6_000..<6_050 {
                try writer.execute("INSERT INTO t (id, text) VALUES (?, ?)", id, Self.text(id, version: 2))
                expected[id] = Self.text(id, version: 2)
            }
            #expect(try Self.rows(writer) == expected)
            #expect(try Self.rows(other) == expected)

            // What a crash leaves: the file and its WAL as they are (no -shm), recovered by a new connection.
            let copy = directory.path("copy.sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            other.close()
            writer.close()
            let recovered = try Self.open(copy)
            defer { recovered.close() }
            #expect(try Self.rows(recovered) == expected)
            #expect(try recovered.firstValue("PRAGMA integrity_check") == .text("ok"))
            try recovered.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try Self.rows(recovered) == expected)
        }
    }

    @Test("Each commit is in the WAL file when it returns, also in exclusive locking mode", arguments: ["NORMAL", "EXCLUSIVE"])
    func commitsAreWrittenAtOnce(lockingMode: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("small.sqlite")
            let writer = try Self.open(path)
            defer { writer.close() }
            try writer.execute("PRAGMA locking_mode = \(lockingMode)")
            try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)")
            var expected: [Int: String] = [:]
            for id in 0..<40 {
                let count = id % 2 == 0 ? 1 : 60 // small commits between larger ones
                try writer.execute("BEGIN")
                for row in 0..<count {
                    let key = id * 100 + row
                    try writer.execute("INSERT INTO t (id, text) VALUES (?, ?)", key, Self.text(key, version: 0))
                    expected[key] = Self.text(key, version: 0)
                }
                try writer.execute("COMMIT")
                if lockingMode == "NORMAL" {
                    let reader = try Self.open(path)
                    #expect(try Self.rows(reader) == expected)
                    reader.close()
                }
            }
            // What a crash leaves right after the last commit returned.
            let copy = directory.path("copy.sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            let recovered = try Self.open(copy)
            defer { recovered.close() }
            #expect(try Self.rows(recovered) == expected)
        }
    }
}
