import Couchette
import CouchetteCore
import Foundation
import Testing

// MARK: - EncryptedBlobTests

/// Blobs of an encrypted database: stored in the encrypted blob format (no plaintext on disk), read back whole and
/// streamed, refused when tampered with, moved between plain and encrypted databases, and re-encrypted by key changes.
@Suite(.timeLimit(.minutes(5))) struct EncryptedBlobTests {
    static let marker = "BLOB-PLAINTEXT-MARKER-7d2a"

    /// `size` bytes of a pattern with the marker every 50,000 bytes.
    static func content(size: Int, seed: UInt8 = 1) -> Data {
        var data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        var offset = 0
        while offset + marker.utf8.count <= size {
            data.replaceSubrange(offset..<offset + marker.utf8.count, with: Data(marker.utf8))
            offset += 50_000
        }
        return data
    }

    /// Every file under a database folder, by path relative to it.
    static func files(of name: String, in directory: TemporaryDirectory) throws -> [String: Data] {
        let folder = (directory.path as NSString).appendingPathComponent("\(name).couchette")
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            let path = (folder as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return files
    }

    /// Whether `data` holds the marker in UTF-8 or UTF-16 (either byte order).
    static func hasMarker(_ data: Data) -> Bool {
        let utf16 = Array(marker.utf16)
        let little = Data(utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        let big = Data(utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        return [Data(marker.utf8), little, big].contains { data.range(of: $0) != nil }
    }

    /// The blob files (`Attachments/*.blob`) of a database.
    static func blobFiles(of name: String, in directory: TemporaryDirectory) throws -> [String: Data] {
        try files(of: name, in: directory).filter { $0.key.hasPrefix("Attachments/") && $0.key.hasSuffix(".blob") }
    }

    static func blob(_ db: Database, _ id: String) throws -> Blob? {
        try db.defaultCollection().document(id: id)?.blob(forKey: "file")
    }

    static func save(_ blob: Blob, as id: String, in db: Database) throws {
        try db.defaultCollection().save(document: MutableDocument(id: id).setBlob(blob, forKey: "file"))
    }

    /// Reads a stream to its end; the error that ended it, if any.
    static func readToEnd(_ stream: InputStream) -> (Data, (any Error)?) {
        stream.open()
        defer { stream.close() }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 10_000)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count < 0 { return (result, stream.streamError) }
            if count == 0 { return (result, nil) }
            result.append(contentsOf: buffer[..<count])
        }
    }

    @Test func blobsAreStoredEncryptedAndReadBackWholeAndStreamed() throws {
        let directory = TemporaryDirectory()
        // The scan finds the marker in a plain database's blobs…
        let plain = try directory.open("plain")
        try Self.save(Blob(contentType: "text/plain", data: Self.content(size: 1_000)), as: "small", in: plain)
        #expect(try Self.files(of: "plain", in: directory).values.contains(where: Self.hasMarker))
        try plain.close()

        // …and nowhere in an encrypted one's, whatever the blob's size or source.
        let db = try directory.open("secret") { $0.encryptionKey = .password("pw") }
        let small = Self.content(size: 1_000)
        let large = Self.content(size: 3 * 65_536 + 12_345, seed: 2)
        let exact = Self.content(size: 2 * 65_536, seed: 3)
        let fromFile = Self.content(size: 70_000, seed: 4)
        let sourceFile = URL(fileURLWithPath: directory.path).appendingPathComponent("source.bin")
        try fromFile.write(to: sourceFile)
        try Self.save(Blob(contentType: "text/plain", data: small), as: "small", in: db)
        try Self.save(Blob(contentType: "application/octet-stream", contentStream: InputStream(data: large)), as: "large", in: db)
        try Self.save(Blob(contentType: "application/octet-stream", data: exact), as: "exact", in: db)
        try Self.save(Blob(contentType: "application/octet-stream", fileURL: sourceFile), as: "file", in: db)
        try Self.save(Blob(contentType: "text/plain", data: Data()), as: "empty", in: db)
        try FileManager.default.removeItem(at: sourceFile)

        let blobFiles = try Self.blobFiles(of: "secret", in: directory)
        #expect(blobFiles.count == 5)
        #expect(blobFiles.values.allSatisfy { $0.prefix(4) == Data("EBLB".utf8) })
        #expect(!(try Self.files(of: "secret", in: directory).values.contains(where: Self.hasMarker)))
        let expected = ["small": small, "large": large, "exact": exact, "file": fromFile, "empty": Data()]
        // An empty blob is one sealed empty chunk: a 64-byte header and a 16-byte tag.
        #expect(blobFiles.values.contains { $0.count == 80 })

        for reopen in [false, true] {
            let current = reopen ? try directory.open("secret") { $0.encryptionKey = .password("pw") } : db
            for (id, content) in expected {
                let blob = try #require(try Self.blob(current, id))
                #expect(blob.content == content, "\(id)")
                #expect(blob.length == UInt64(content.count), "\(id)")
                let (streamed, error) = Self.readToEnd(try #require(blob.contentStream))
                #expect(error == nil)
                #expect(streamed == content, "\(id)")
                #expect(try current.getBlob(properties: blob.properties)?.content == content)
            }
            try current.performMaintenance(type: .integrityCheck)
            try current.close()
        }
    }

    @Test func aTamperedBlobFileIsRefusedNeverReturnedAsData() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("secret") { $0.encryptionKey = .password("pw") }
        defer { try? db.close() }
        let content = Self.content(size: 3 * 65_536 + 8_000)  // four chunks
        try Self.save(Blob(contentType: "application/octet-stream", data: content), as: "doc", in: db)
        try Self.save(Blob(contentType: "text/plain", data: Self.content(size: 500, seed: 9)), as: "other", in: db)
        let folder = (directory.path as NSString).appendingPathComponent("secret.couchette/Attachments")
        let digest = try #require(try Self.blob(db, "doc")?.digest)
        let otherDigest = try #require(try Self.blob(db, "other")?.digest)
        func file(_ digest: String) throws -> URL {
            let hex = try AttachmentDigest(parsing: digest).hexString
            return URL(fileURLWithPath: folder).appendingPathComponent(hex + ".blob")
        }
        let original = try Data(contentsOf: file(digest))
        let stored = 65_536 + 16
        func chunk(_ index: Int) -> Data { original[(64 + index * stored)..<min(64 + (index + 1) * stored, original.count)] }
        var tampered: [(String, Data, CouchetteError.Code)] = []
        var flipped = original
        flipped[5] ^= 1
        tampered.append(("a header byte", flipped, .corrupt))
        flipped = original
        flipped[10] ^= 1
        tampered.append(("the key id", flipped, .wrongEncryptionKey))
        flipped = original
        flipped[64 + stored + 100] ^= 1
        tampered.append(("a ciphertext byte", flipped, .corrupt))
        flipped = original
        flipped[original.count - 1] ^= 1
        tampered.append(("the last tag", flipped, .corrupt))
        tampered.append(("the last chunk dropped", original.prefix(64 + 3 * stored), .corrupt))
        tampered.append(("two chunks swapped", original.prefix(64) + chunk(1) + chunk(0) + original.dropFirst(64 + 2 * stored), .corrupt))
        tampered.append(("a chunk appended", original + chunk(1), .corrupt))
        tampered.append(("cut inside a chunk", original.prefix(original.count - 100), .corrupt))
        tampered.append(("another valid blob", try Data(contentsOf: file(otherDigest)), .corrupt))

        for (what, bytes, code) in tampered {
            try bytes.write(to: file(digest))
            let blob = try #require(try Self.blob(db, "doc"))
            #expect(blob.content == nil, "\(what)")
            let (_, error) = Self.readToEnd(try #require(blob.contentStream))
            #expect((error as? CouchetteError)?.code == code, "\(what): \(String(describing: error))")
            #expect(throws: CouchetteError.self, "\(what)") { try db.performMaintenance(type: .integrityCheck) }
        }
        try original.write(to: file(digest))
        #expect(try Self.blob(db, "doc")?.content == content)
        try db.performMaintenance(type: .integrityCheck)
    }

    @Test func blobsMoveBetweenPlainAndEncryptedDatabases() throws {
        let directory = TemporaryDirectory()
        let plain = try directory.open("plain")
        let secret = try directory.open("secret") { $0.encryptionKey = .key(EncryptionTests.rawKey) }
        defer {
            try? plain.close()
            try? secret.close()
        }
        let first = Self.content(size: 100_000, seed: 5)
        let second = Self.content(size: 90_000, seed: 6)
        try Self.save(Blob(contentType: "application/octet-stream", data: first), as: "a", in: plain)
        try Self.save(Blob(contentType: "application/octet-stream", data: second), as: "b", in: secret)
        // A blob read from one database, saved in a document of the other: copied, decrypted or encrypted.
        try Self.save(try #require(try Self.blob(plain, "a")), as: "a", in: secret)
        try Self.save(try #require(try Self.blob(secret, "b")), as: "b", in: plain)
        #expect(try Self.blob(secret, "a")?.content == first)
        #expect(try Self.blob(plain, "b")?.content == second)
        let plainFiles = try Self.blobFiles(of: "plain", in: directory)
        #expect(Set(plainFiles.values) == [first, second])
        #expect(try Self.blobFiles(of: "secret", in: directory).values.allSatisfy { $0.prefix(4) == Data("EBLB".utf8) })
    }

    @Test func keyChangesReencryptEveryBlob() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("changing")
        let contents = (0..<4).map { Self.content(size: 40_000 * ($0 + 1), seed: UInt8($0)) }
        for (index, content) in contents.enumerated() {
            try Self.save(Blob(contentType: "application/octet-stream", data: content), as: "b\(index)", in: db)
        }
        let held = try #require(try Self.blob(db, "b3"))  // read before the changes, used after them
        var keyIDs: Set<Data> = []
        for (step, key) in [EncryptionKey.password("first"), .key(EncryptionTests.rawKey), .password("first"), nil]
            .enumerated()
        {
            try db.changeEncryptionKey(key)
            try Self.save(
                Blob(contentType: "text/plain", data: Self.content(size: 1_000, seed: UInt8(100 + step))),
                as: "after\(step)", in: db)
            let files = try Self.blobFiles(of: "changing", in: directory)
            #expect(files.count == 5 + step)
            if key == nil {
                #expect(Set(files.values).isSuperset(of: contents))
            } else {
                #expect(files.values.allSatisfy { $0.prefix(4) == Data("EBLB".utf8) })
                #expect(!files.values.contains(where: Self.hasMarker))
                let ids = Set(files.values.map { $0[8..<24] })
                #expect(ids.count == 1)
                keyIDs.formUnion(ids)
            }
            for (index, content) in contents.enumerated() { #expect(try Self.blob(db, "b\(index)")?.content == content) }
            #expect(held.content == contents[3])
            #expect(try Self.blob(db, "after\(step)")?.content == Self.content(size: 1_000, seed: UInt8(100 + step)))
            try db.performMaintenance(type: .integrityCheck)
            // Nothing of the change is left beside the live files.
            let folder = try FileManager.default.contentsOfDirectory(atPath: try #require(db.path))
            #expect(Set(folder).isSubset(of: ["db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "Attachments"]), "\(folder)")
        }
        // Each key (a password's is salted afresh by each change) has a key of its own for blobs.
        #expect(keyIDs.count == 3)
        try db.close()
    }

    @Test func aBlobThatDoesNotVerifyStopsAKeyChangeAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("secret") { $0.encryptionKey = .password("old") }
        let content = Self.content(size: 10_000)
        try Self.save(Blob(contentType: "text/plain", data: content), as: "doc", in: db)
        try Self.save(Blob(contentType: "text/plain", data: Self.content(size: 100, seed: 7)), as: "bad", in: db)
        let badFile = try #require(try Self.blobFiles(of: "secret", in: directory).first { $0.value.count < 300 })
        let badPath = (directory.path as NSString).appendingPathComponent("secret.couchette/" + badFile.key)
        var bytes = badFile.value
        bytes[100] ^= 1
        try bytes.write(to: URL(fileURLWithPath: badPath))

        let error = #expect(throws: CouchetteError.self) { try db.changeEncryptionKey(.password("new")) }
        #expect(error?.code == .corrupt)
        // Still open with the old key, every file as it was.
        #expect(try Self.blob(db, "doc")?.content == content)
        try db.close()
        let folder = try FileManager.default.contentsOfDirectory(
            atPath: (directory.path as NSString).appendingPathComponent("secret.couchette"))
        #expect(Set(folder).isSubset(of: ["db.sqlite3", "Attachments"]), "\(folder)")
        #expect(EncryptionKeyChangeTests.refuses(directory, name: "secret", .password("new")))
        let reopened = try directory.open("secret") { $0.encryptionKey = .password("old") }
        #expect(try Self.blob(reopened, "doc")?.content == content)
        try reopened.close()
    }

    @Test func aCopiedEncryptedDatabaseReadsItsBlobsWithTheSameKey() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("original") { $0.encryptionKey = .password("pw") }
        let content = Self.content(size: 80_000)
        try Self.save(Blob(contentType: "application/octet-stream", data: content), as: "doc", in: db)
        let path = try #require(db.path)
        try db.close()
        var config = directory.configuration
        config.encryptionKey = .password("pw")
        try Database.copy(fromPath: path, toDatabase: "copy", withConfig: config)
        let copy = try directory.open("copy") { $0.encryptionKey = .password("pw") }
        #expect(try Self.blob(copy, "doc")?.content == content)
        try copy.close()
    }

    @Test func aBlobBeingWrittenIsEncryptedInItsTemporaryFileToo() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("secret") { $0.encryptionKey = .password("pw") }
        defer { try? db.close() }
        let attachments = (directory.path as NSString).appendingPathComponent("secret.couchette/Attachments")
        let content = Self.content(size: 6 * 65_536)
        let stream = TemporaryFileScanningStream(content: content, folder: attachments)
        try Self.save(Blob(contentType: "application/octet-stream", contentStream: stream), as: "doc", in: db)
        // The stream looked at the temporary file while the blob was being written.
        #expect(stream.scannedBytes > 4 * 65_536)
        #expect(!stream.sawMarker)
        #expect(try Self.blob(db, "doc")?.content == content)
    }
}

/// A stream of `content` in 64 KiB pieces that, before each piece after the first, reads the temporary files of the
/// blob folder (the write in progress) and notes whether any holds the marker.
private final class TemporaryFileScanningStream: InputStream {
    private let content: Data
    private let folder: String
    private var offset = 0
    private(set) var scannedBytes = 0
    private(set) var sawMarker = false

    init(content: Data, folder: String) {
        self.content = content
        self.folder = folder
        super.init(data: Data())
    }

    override func open() {}
    override func close() {}
    override var streamStatus: Stream.Status { offset < content.count ? .open : .atEnd }
    override var hasBytesAvailable: Bool { offset < content.count }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        if offset > 0 {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".blobtmp") {
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(name)))) ?? Data()
                scannedBytes = max(scannedBytes, bytes.count)
                if EncryptedBlobTests.hasMarker(bytes) { sawMarker = true }
            }
        }
        let count = min(length, 65_536, content.count - offset)
        content.copyBytes(to: buffer, from: offset..<offset + count)
        offset += count
        return count
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }
}
