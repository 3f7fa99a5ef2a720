import Foundation
import Testing

@testable import CouchetteSQLite

/// Checkpoints of an encrypted database copy each WAL frame's stored page to the database as it is (no decryption, no
/// second encryption), so the page's tag travels with it: a frame tampered with (checksums recomputed, so SQLite's
/// recovery accepts it) is reported as corruption once checkpointed, never returned as data.
@Suite("Encrypted checkpoints", .timeLimit(.minutes(5)))
struct EncryptedCheckpointTests {
    static let key = Connection.EncryptionKey.raw((0..<32).map { UInt8($0 &* 7 &+ 3) })
    static let frameHeaderSize = 24
    static let pageSize = 4096
    static let walHeaderSize = 32

    /// Writes rows into an encrypted database without checkpointing, and copies its file and WAL to `copy` (the state
    /// a crash leaves) before closing it.
    static func writeAndCopy(_ directory: TemporaryDirectory, copy: String) throws {
        let path = directory.path("source.sqlite")
        let connection = try Connection(path: path, options: .init(encryptionKey: key))
        try connection.execute("PRAGMA wal_autocheckpoint = 0")
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)")
        for row in 0..<300 {
            try connection.execute("INSERT INTO t (text) VALUES (?)", "row \(row) " + String(repeating: "w", count: 400))
        }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        connection.close()
    }

    /// The frames of a WAL: offset and page number of each.
    static func frames(_ wal: Data) -> [(offset: Int, pgno: UInt32)] {
        var frames: [(Int, UInt32)] = []
        var offset = walHeaderSize
        while offset + frameHeaderSize + pageSize <= wal.count {
            frames.append((offset, bigEndian(wal, offset)))
            offset += frameHeaderSize + pageSize
        }
        return frames
    }

    static func bigEndian(_ data: Data, _ offset: Int) -> UInt32 {
        data[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Recomputes the checksum chain of every frame (SQLite's WAL checksum, word order from the magic).
    static func rechecksum(_ wal: inout Data) {
        let bigEndianWords = wal[3] & 1 == 1
        func word(_ offset: Int) -> UInt32 {
            let value = bigEndian(wal, offset)
            return bigEndianWords ? value : value.byteSwapped
        }
        var s1 = bigEndian(wal, 24)
        var s2 = bigEndian(wal, 28)
        for (offset, _) in frames(wal) {
            for start in [offset..<offset + 8, offset + frameHeaderSize..<offset + frameHeaderSize + pageSize] {
                for index in stride(from: start.lowerBound, to: start.upperBound, by: 8) {
                    s1 = s1 &+ word(index) &+ s2
                    s2 = s2 &+ word(index + 4) &+ s1
                }
            }
            for (position, value) in [(offset + 16, s1), (offset + 20, s2)] {
                for byte in 0..<4 { wal[position + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(byte))) }
            }
        }
    }

    @Test("A checkpoint stores each frame's page bytes as they are, and the copy reads back whole")
    func checkpointCopiesStoredPages() throws {
        try withTemporaryDirectory { directory in
            let copy = directory.path("copy.sqlite")
            try Self.writeAndCopy(directory, copy: copy)
            let wal = try Data(contentsOf: URL(fileURLWithPath: copy + "-wal"))
            var newest: [UInt32: Data] = [:]
            for (offset, pgno) in Self.frames(wal) {
                newest[pgno] = wal[(offset + Self.frameHeaderSize)..<(offset + Self.frameHeaderSize + Self.pageSize)]
            }
            #expect(newest.count > 20)

            let connection = try Connection(path: copy, options: .init(encryptionKey: Self.key))
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try connection.firstValue("SELECT count(*) FROM t") == .integer(300))
            #expect(try connection.firstValue("PRAGMA integrity_check") == .text("ok"))
            connection.close()
            let database = try Data(contentsOf: URL(fileURLWithPath: copy))
            for (pgno, stored) in newest {
                let start = Int(pgno - 1) * Self.pageSize
                #expect(database[start..<start + Self.pageSize] == stored, "page \(pgno)")
            }
        }
    }

    @Test("A tampered frame with valid checksums is checkpointed and then reported as corrupt, never read")
    func tamperedFrameIsCorruptAfterTheCheckpoint() throws {
        try withTemporaryDirectory { directory in
            let copy = directory.path("copy.sqlite")
            try Self.writeAndCopy(directory, copy: copy)
            var wal = try Data(contentsOf: URL(fileURLWithPath: copy + "-wal"))
            // The newest frame of a data page other than page 1.
            let frames = Self.frames(wal)
            let target = try #require(frames.last { $0.pgno > 2 })
            #expect(!frames.contains { $0.pgno == target.pgno && $0.offset > target.offset })
            wal[target.offset + Self.frameHeaderSize + 1000] ^= 0x01
            Self.rechecksum(&wal)
            try wal.write(to: URL(fileURLWithPath: copy + "-wal"))

            let connection = try Connection(path: copy, options: .init(encryptionKey: Self.key))
            defer { connection.close() }
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try FileManager.default.attributesOfItem(atPath: copy + "-wal")[.size] as? Int == 0)
            let error = #expect(throws: SQLiteError.self) {
                _ = try connection.query("SELECT id, text FROM t")
            }
            #expect(error?.primaryCode == .corrupt)
        }
    }
}
