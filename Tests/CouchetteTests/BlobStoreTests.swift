import CouchetteCore
import Foundation
import Testing

@testable import Couchette

@Suite(.timeLimit(.minutes(5))) struct BlobStoreTests {
    /// Runs `body` with a fresh store in a temporary directory, removed afterwards.
    private func withStore(_ body: (BlobStore, URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("BlobStoreTests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try BlobStore(directory: directory.appendingPathComponent("Attachments", isDirectory: true))
        try body(store, store.directory)
    }

    private func fileNames(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Deterministic pseudo-random bytes, generated chunk by chunk.
    private func chunks(total: Int, chunkSize: Int = 100_000) -> [Data] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var result: [Data] = []
        var remaining = total
        while remaining > 0 {
            let count = min(chunkSize, remaining)
            var chunk = Data(count: count)
            for index in 0..<count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                chunk[index] = UInt8(truncatingIfNeeded: state >> 33)
            }
            result.append(chunk)
            remaining -= count
        }
        return result
    }

    // MARK: - Writing

    @Test func createsItsDirectory() throws {
        try withStore { store, directory throws in
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
            let digests = try store.allDigests()
            #expect(digests.isEmpty)
        }
    }

    @Test func writingTheSameContentTwiceStoresOneFileNamedByItsSHA1() throws {
        try withStore { store, directory throws in
            let hello = Data("hello".utf8)
            let first = try store.write(data: hello)
            let second = try store.write(data: hello)
            #expect(first.digest == second.digest)
            #expect(first.digest.description == "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=")
            #expect(first.length == 5)
            #expect(try fileNames(in: directory) == ["aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d.blob"])
            #expect(store.fileURL(for: first.digest)?.lastPathComponent == "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d.blob")
            #expect(store.contains(first.digest))
            #expect(store.length(of: first.digest) == 5)
            #expect(try store.data(for: first.digest) == hello)
            #expect(try store.allDigests() == [first.digest])
        }
    }

    @Test func storesEmptyContent() throws {
        try withStore { store, _ throws in
            let written = try store.write(data: Data())
            #expect(written.length == 0)
            #expect(written.digest == AttachmentDigest.sha1(of: Data()))
            #expect(try store.data(for: written.digest) == Data())
        }
    }

    @Test func storesAFiveMegabyteStreamWithTheSameDigestAsAnIndependentHash() throws {
        try withStore { store, directory throws in
            let parts = chunks(total: 5 * 1024 * 1024 + 123)
            let source = directory.deletingLastPathComponent().appendingPathComponent("source.bin")
            #expect(FileManager.default.createFile(atPath: source.path, contents: nil))
            let handle = try FileHandle(forWritingTo: source)
            for part in parts { try handle.write(contentsOf: part) }
            try handle.close()

            let expected = AttachmentDigest.sha1(of: parts.reduce(into: Data()) { $0.append($1) })
            let stream = try #require(InputStream(url: source))
            let written = try store.write(stream: stream)
            #expect(written.digest == expected)
            #expect(written.length == 5 * 1024 * 1024 + 123)
            #expect(store.length(of: expected) == 5 * 1024 * 1024 + 123)
            #expect(try fileNames(in: directory) == [expected.hexString + ".blob"])
            #expect(AttachmentDigest.sha1(of: try store.data(for: expected)) == expected)
        }
    }

    @Test func copiesAFile() throws {
        try withStore { store, directory throws in
            let source = directory.deletingLastPathComponent().appendingPathComponent("note.txt")
            let content = Data(String(repeating: "Couchette ", count: 20_000).utf8)
            try content.write(to: source)
            let written = try store.write(fileAt: source)
            #expect(written.digest == AttachmentDigest.sha1(of: content))
            #expect(written.length == UInt64(content.count))
            #expect(try store.data(for: written.digest) == content)
            #expect(FileManager.default.fileExists(atPath: source.path))  // a copy, not a move
        }
    }

    @Test func rejectsBadFileURLs() throws {
        try withStore { store, directory throws in
            #expect(throws: CouchetteError.self) {
                try store.write(fileAt: directory.appendingPathComponent("missing.bin"))
            }
            do {
                try store.write(fileAt: directory.appendingPathComponent("missing.bin"))
            } catch let error as CouchetteError {
                #expect(error.code == .notFound)
            }
            do {
                try store.write(fileAt: directory)
                Issue.record("a directory is not a blob")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
            do {
                try store.write(fileAt: try #require(URL(string: "https://example.com/a.png")))
                Issue.record("a remote URL is not a blob")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
            #expect(try fileNames(in: directory).isEmpty)
        }
    }

    @Test func verifiesAnExpectedDigest() throws {
        try withStore { store, directory throws in
            let content = Data("attachment body".utf8)
            let wrong = AttachmentDigest.sha1(of: Data("something else".utf8))
            do {
                try store.write(data: content, expectedDigest: wrong)
                Issue.record("a mismatch must be rejected")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
            do {
                try store.write(stream: InputStream(data: content), expectedDigest: wrong)
                Issue.record("a mismatch must be rejected")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
            do {
                try store.write(
                    stream: InputStream(data: content), expectedDigest: .md5(of: Data("something else".utf8)))
                Issue.record("a mismatch must be rejected")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
            #expect(try fileNames(in: directory).isEmpty)  // nothing stored, no temporary file left

            // A matching MD5 (as a CouchDB peer sends) is accepted; the store still keys by SHA-1.
            let written = try store.write(stream: InputStream(data: content), expectedDigest: .md5(of: content))
            #expect(written.digest == AttachmentDigest.sha1(of: content))
            let again = try store.write(data: content, expectedDigest: .sha1(of: content))
            #expect(again.digest == written.digest)
            #expect(try fileNames(in: directory) == [written.digest.hexString + ".blob"])
        }
    }

    // MARK: - Reading

    @Test func inputStreamReadsTheStoredBytes() throws {
        try withStore { store, _ throws in
            let content = chunks(total: 200_000)[0] + chunks(total: 100_000)[0]
            let digest = try store.write(data: content).digest
            let stream = try #require(store.inputStream(for: digest))
            #expect(readAll(stream) == content)
            #expect(store.inputStream(for: .sha1(of: Data("absent".utf8))) == nil)
        }
    }

    @Test func missingAndNonSHA1DigestsAreNotFound() throws {
        try withStore { store, _ throws in
            let content = Data("hello".utf8)
            try store.write(data: content)
            let md5 = AttachmentDigest.md5(of: content)
            #expect(!store.contains(md5))
            #expect(store.fileURL(for: md5) == nil)
            #expect(store.length(of: md5) == nil)
            #expect(store.inputStream(for: md5) == nil)
            let absent = AttachmentDigest.sha1(of: Data("absent".utf8))
            #expect(!store.contains(absent))
            do {
                _ = try store.data(for: absent)
                Issue.record("expected notFound")
            } catch let error as CouchetteError {
                #expect(error.code == .notFound)
            }
        }
    }

    // MARK: - Removal

    @Test func removesOneBlob() throws {
        try withStore { store, directory throws in
            let digest = try store.write(data: Data("bye".utf8)).digest
            #expect(try store.remove(digest))
            #expect(!store.contains(digest))
            #expect(try !store.remove(digest))
            #expect(try fileNames(in: directory).isEmpty)
        }
    }

    @Test func removeAllExceptDeletesOnlyUnreferencedBlobsAndTemporaryLeftovers() throws {
        try withStore { store, directory throws in
            let kept = try store.write(data: Data("kept".utf8)).digest
            let dropped1 = try store.write(data: Data("dropped 1".utf8)).digest
            let dropped2 = try store.write(data: Data("dropped 2".utf8)).digest
            let leftover = directory.appendingPathComponent("tmp-\(UUID().uuidString).blobtmp")
            try Data("partial".utf8).write(to: leftover)
            let foreign = directory.appendingPathComponent("README")
            try Data("not a blob".utf8).write(to: foreign)

            #expect(Set(try store.allDigests()) == [kept, dropped1, dropped2])  // temp and foreign files ignored
            #expect(try store.removeAll(except: [kept]) == 2)
            #expect(try store.allDigests() == [kept])
            #expect(!FileManager.default.fileExists(atPath: leftover.path))
            #expect(FileManager.default.fileExists(atPath: foreign.path))
            #expect(try store.data(for: kept) == Data("kept".utf8))
            #expect(try store.removeAll(except: [kept]) == 0)
        }
    }

    // MARK: - Concurrency

    @Test func concurrentWritesOfTheSameContentStoreItOnce() throws {
        try withStore { store, directory throws in
            let content = chunks(total: 300_000)[0]
            let expected = AttachmentDigest.sha1(of: content)
            let results = DigestList()
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                let digest =
                    index.isMultiple(of: 2)
                    ? try? store.write(stream: InputStream(data: content)).digest
                    : try? store.write(data: content).digest
                results.append(digest)
            }
            #expect(results.all == Array(repeating: expected, count: 8))
            #expect(try fileNames(in: directory) == [expected.hexString + ".blob"])
            #expect(try store.data(for: expected) == content)
        }
    }
}

/// Results gathered from several threads.
private final class DigestList: @unchecked Sendable {
    private let lock = NSLock()
    private var digests: [AttachmentDigest?] = []

    func append(_ digest: AttachmentDigest?) {
        lock.lock()
        defer { lock.unlock() }
        digests.append(digest)
    }

    var all: [AttachmentDigest?] {
        lock.lock()
        defer { lock.unlock() }
        return digests
    }
}
