import Couchette
import Foundation
import Testing

// MARK: - EncryptionTests

/// Databases encrypted with a password or a raw key: round trips, 401 for wrong or missing keys with the file left
/// as it was, no plaintext on disk, and tampering reported as corruption, never returned as data.
@Suite(.timeLimit(.minutes(5))) struct EncryptionTests {
    static let marker = "PLAINTEXT-MARKER-51c3e2"
    static let rawKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

    /// Saves `count` documents carrying the marker.
    static func fill(_ db: Database, count: Int = 300) throws {
        let collection = try db.defaultCollection()
        try db.inBatch {
            for index in 0..<count {
                _ = try collection.putProperties(["title": "\(marker) \(index)", "n": index], documentID: "doc\(index)")
            }
        }
    }

    /// The files of database `name` (the SQLite file and its WAL and shared memory when present).
    static func files(of name: String, in directory: TemporaryDirectory) throws -> [String: Data] {
        let folder = (directory.path as NSString).appendingPathComponent("\(name).couchette")
        var files: [String: Data] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasPrefix("db.sqlite3") {
            files[file] = try Data(contentsOf: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(file)))
        }
        return files
    }

    static func contains(_ data: Data, _ text: String) -> Bool {
        data.range(of: Data(text.utf8)) != nil
    }

    @Test(arguments: [EncryptionKey.password("correct horse"), .key(rawKey)])
    func anEncryptedDatabaseReopensWithItsKey(key: EncryptionKey) throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("secret") { $0.encryptionKey = key }
        try Self.fill(db)
        try db.close()
        let again = try directory.open("secret") { $0.encryptionKey = key }
        defer { try? again.close() }
        #expect(try again.defaultCollection().count == 300)
        #expect(try again.defaultCollection().document(id: "doc7")?.string(forKey: "title") == "\(Self.marker) 7")
    }

    @Test func pathsWithURICharactersWork() throws {
        let directory = TemporaryDirectory()
        var config = directory.configuration
        config.directory = (directory.path as NSString).appendingPathComponent("odd ?#% folder")
        config.encryptionKey = .password("pw")
        let db = try Database(name: "odd", config: config)
        try Self.fill(db, count: 5)
        try db.close()
        #expect(try Database(name: "odd", config: config).defaultCollection().count == 5)
    }

    @Test func wrongOrMissingKeysAre401AndLeaveTheFileUnchanged() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("secret") { $0.encryptionKey = .password("right") }
        try Self.fill(db, count: 20)
        try db.close()
        let before = try Self.files(of: "secret", in: directory)
        for wrong: EncryptionKey? in [.password("wrong"), nil, .key(Self.rawKey)] {
            let error = #expect(throws: CouchetteError.self) {
                _ = try directory.open("secret") { $0.encryptionKey = wrong }
            }
            #expect(error?.code == .wrongEncryptionKey)
            #expect(error?.status == 401)
        }
        #expect(try Self.files(of: "secret", in: directory) == before)

        // A key for a plain database is refused the same way.
        try directory.open("plain").close()
        let plainBefore = try Self.files(of: "plain", in: directory)
        let error = #expect(throws: CouchetteError.self) {
            _ = try directory.open("plain") { $0.encryptionKey = .password("any") }
        }
        #expect(error?.status == 401)
        #expect(try Self.files(of: "plain", in: directory) == plainBefore)
    }

    @Test func aRawKeyMustBe32BytesAndAPasswordNonEmpty() throws {
        let directory = TemporaryDirectory()
        for bad: EncryptionKey in [.key(Data(count: 31)), .key(Data(count: 33)), .password("")] {
            let error = #expect(throws: CouchetteError.self) {
                _ = try directory.open("bad") { $0.encryptionKey = bad }
            }
            #expect(error?.code == .badInput)
            // A failed create leaves the disk as it was: no empty `bad.couchette` folder.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [], "after \(bad)")
        }
    }

    @Test func noPlaintextReachesTheDisk() throws {
        let directory = TemporaryDirectory()
        // The scan finds the marker in a plain database…
        let plain = try directory.open("plain")
        try Self.fill(plain)
        #expect(try Self.files(of: "plain", in: directory).values.contains { Self.contains($0, Self.marker) })
        try plain.close()
        // …and nowhere in an encrypted one: the database, its WAL and shared memory, open or closed.
        let db = try directory.open("secret") { $0.encryptionKey = .password("pw") }
        try Self.fill(db)
        let whileOpen = try Self.files(of: "secret", in: directory)
        #expect(whileOpen.keys.contains("db.sqlite3-wal"))
        #expect(!whileOpen.values.contains { Self.contains($0, Self.marker) || Self.contains($0, "doc7") })
        try db.close()
        let closed = try Self.files(of: "secret", in: directory)
        #expect(!closed.values.contains { Self.contains($0, Self.marker) || Self.contains($0, "SQLite format 3") })
    }

    @Test func aFlippedByteIsReportedAsCorruptionNeverReturnedAsData() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("secret") { $0.encryptionKey = .password("pw") }
        try Self.fill(db, count: 500)
        try db.close()
        let path = (directory.path as NSString).appendingPathComponent("secret.couchette/db.sqlite3")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let pages = bytes.count / 4096
        #expect(pages > 4)
        bytes[(pages - 2) * 4096 + 1000] ^= 0x01  // a data page near the end
        try bytes.write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: CouchetteError.self) {
            let reopened = try directory.open("secret") { $0.encryptionKey = .password("pw") }
            defer { try? reopened.close() }
            let collection = try reopened.defaultCollection()
            for index in 0..<500 { _ = try collection.document(id: "doc\(index)") }
        }
        #expect(error?.code == .corrupt)
    }
}

// MARK: - Changing keys

/// `changeEncryptionKey`: plain to encrypted, a new key, and back to plain, with the data intact and only the
/// current key opening the file.
@Suite(.timeLimit(.minutes(5))) struct EncryptionKeyChangeTests {
    static func open(_ directory: TemporaryDirectory, _ key: EncryptionKey?) throws -> Database {
        try directory.open("changing") { $0.encryptionKey = key }
    }

    static func refuses(_ directory: TemporaryDirectory, name: String = "changing", _ key: EncryptionKey?) -> Bool {
        do {
            try directory.open(name) { $0.encryptionKey = key }.close()
            return false
        } catch let error as CouchetteError {
            return error.code == .wrongEncryptionKey
        } catch {
            return false
        }
    }

    @Test func plainToEncryptedToAnotherKeyToPlain() throws {
        let directory = TemporaryDirectory()
        let db = try Self.open(directory, nil)
        try EncryptionTests.fill(db, count: 200)
        let collection = try db.defaultCollection()
        for (step, key) in [EncryptionKey.password("first"), .key(EncryptionTests.rawKey), nil].enumerated() {
            try db.changeEncryptionKey(key)
            // The open database goes on with the new file.
            _ = try collection.putProperties(["step": step], documentID: "after-\(step)")
            #expect(collection.count == UInt64(201 + step))
        }
        try db.close()
        let files = try EncryptionTests.files(of: "changing", in: directory)
        #expect(files["db.sqlite3"].map { EncryptionTests.contains($0, EncryptionTests.marker) } == true)
        #expect(Self.refuses(directory, .password("first")))
        #expect(Self.refuses(directory, .key(EncryptionTests.rawKey)))
        let plain = try Self.open(directory, nil)
        #expect(try plain.defaultCollection().count == 203)
        #expect(try plain.defaultCollection().document(id: "doc42")?.string(forKey: "title") == "\(EncryptionTests.marker) 42")
        try plain.changeEncryptionKey(.password("last"))
        try plain.close()
        #expect(Self.refuses(directory, nil))
        let last = try Self.open(directory, .password("last"))
        #expect(try last.defaultCollection().count == 203)
        try last.close()
        #expect(!(try EncryptionTests.files(of: "changing", in: directory).values.contains {
            EncryptionTests.contains($0, EncryptionTests.marker)
        }))
    }

    @Test func aChangeInsideATransactionIsRefused() throws {
        let directory = TemporaryDirectory()
        let db = try Self.open(directory, .password("pw"))
        defer { try? db.close() }
        let error = #expect(throws: CouchetteError.self) {
            try db.inBatch { try db.changeEncryptionKey(.password("other")) }
        }
        #expect(error?.code == .busy)
    }
}
