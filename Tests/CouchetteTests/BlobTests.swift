import CouchetteCore
import Foundation
import Testing

@testable import Couchette

@Suite(.timeLimit(.minutes(5))) struct BlobTests {
    private static let hello = Data("hello".utf8)
    private static let helloDigest = "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00="

    /// Runs `body` with a fresh store and a scratch directory, both removed afterwards.
    private func withStore(_ body: (BlobStore, URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("BlobTests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try BlobStore(directory: directory.appendingPathComponent("Attachments", isDirectory: true))
        try body(store, directory)
    }

    // MARK: - Data blobs

    @Test func dataBlobKnowsItsDigestBeforeInstall() throws {
        let blob = Blob(contentType: "text/plain", data: Self.hello)
        #expect(blob.digest == Self.helloDigest)
        #expect(blob.length == 5)
        #expect(blob.contentType == "text/plain")
        #expect(blob.content == Self.hello)
        #expect(readAll(try #require(blob.contentStream)) == Self.hello)
        #expect(blob.store == nil)
    }

    @Test func propertiesAndJSON() {
        let blob = Blob(contentType: "text/plain", data: Self.hello)
        let properties = blob.properties
        #expect(properties.count == 4)
        #expect(properties["@type"] as? String == "blob")
        #expect(properties["content_type"] as? String == "text/plain")
        #expect(properties["digest"] as? String == Self.helloDigest)
        #expect(properties["length"] as? Int == 5)
        #expect(blob.metadata["digest"] as? String == Self.helloDigest)
        #expect(
            blob.toJSON()
                == #"{"@type":"blob","content_type":"text/plain","digest":"sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=","length":5}"#)
        #expect(Blob.isBlob(properties: properties))
        #expect(!Blob.isBlob(properties: ["@type": "blob"]))
        #expect(!Blob.isBlob(properties: ["@type": "blob", "digest": 42]))
        #expect(!Blob.isBlob(properties: ["@type": "image", "digest": Self.helloDigest]))
        #expect(!Blob.isBlob(properties: ["digest": Self.helloDigest]))
    }

    @Test func attachmentMetadataIsA1xStub() {
        let blob = Blob(contentType: "text/plain", data: Self.hello)
        let entry = blob.attachmentMetadata(revpos: 3)
        #expect(entry["content_type"] as? String == "text/plain")
        #expect(entry["digest"] as? String == Self.helloDigest)
        #expect(entry["length"] as? Int == 5)
        #expect(entry["revpos"] as? Int == 3)
        #expect(entry["stub"] as? Bool == true)
        #expect(entry["@type"] == nil)
        #expect(blob.attachmentMetadata(revpos: nil)["revpos"] == nil)
        let parsed = blob.attachment(revpos: 3)
        #expect(parsed.isStub && parsed.revpos == 3 && parsed.length == 5)
        #expect(parsed.digest?.description == Self.helloDigest)
    }

    @Test func installingADataBlobStoresItOnce() throws {
        try withStore { store, _ throws in
            let blob = Blob(contentType: "text/plain", data: Self.hello)
            try blob.install(into: store)
            try blob.install(into: store)  // idempotent
            try Blob(contentType: "text/html", data: Self.hello).install(into: store)
            #expect(blob.store === store)
            #expect(try store.allDigests().map(\.description) == [Self.helloDigest])
            #expect(blob.content == Self.hello)
        }
    }

    // MARK: - Stream and file blobs

    @Test func streamBlobLearnsItsDigestOnInstall() throws {
        try withStore { store, _ throws in
            // ~5 MB generated chunk by chunk; the stream reads it back from a file.
            var expectedContent = Data()
            var state: UInt32 = 12345
            for _ in 0..<50 {
                var chunk = Data(count: 100_000)
                for index in 0..<chunk.count {
                    state = state &* 1_103_515_245 &+ 12345
                    chunk[index] = UInt8(truncatingIfNeeded: state >> 16)
                }
                expectedContent.append(chunk)
            }
            let expected = AttachmentDigest.sha1(of: expectedContent)
            let stream = InputStream(data: expectedContent)

            let blob = Blob(contentType: "application/octet-stream", contentStream: stream)
            #expect(blob.digest == nil)
            #expect(blob.length == 0)
            #expect(blob.properties.count == 2)
            #expect(blob.properties["digest"] == nil && blob.properties["length"] == nil)
            #expect(!Blob.isBlob(properties: blob.properties))

            try blob.install(into: store)
            #expect(blob.digest == expected.description)
            #expect(blob.length == 5_000_000)
            #expect(store.contains(expected))
            #expect(Blob.isBlob(properties: blob.properties))
            #expect(blob.content.map { AttachmentDigest.sha1(of: $0) } == expected)
            #expect(readAll(try #require(blob.contentStream)).count == 5_000_000)
        }
    }

    @Test func readingAStreamBlobBeforeInstallKeepsTheBytes() throws {
        try withStore { store, _ throws in
            let blob = Blob(contentType: "text/plain", contentStream: InputStream(data: Self.hello))
            #expect(blob.content == Self.hello)
            #expect(blob.content == Self.hello)  // the stream was consumed, the bytes were kept
            #expect(readAll(try #require(blob.contentStream)) == Self.hello)
            #expect(blob.digest == Self.helloDigest)
            try blob.install(into: store)
            #expect(try store.data(for: AttachmentDigest(parsing: Self.helloDigest)) == Self.hello)
        }
    }

    @Test func fileBlob() throws {
        try withStore { store, directory throws in
            let url = directory.appendingPathComponent("picture.png")
            let content = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try content.write(to: url)

            let blob = try Blob(contentType: "image/png", fileURL: url)
            #expect(blob.length == 70_000)
            #expect(blob.digest == nil)
            #expect(blob.content == content)
            #expect(readAll(try #require(blob.contentStream)) == content)

            try blob.install(into: store)
            #expect(blob.digest == AttachmentDigest.sha1(of: content).description)
            try FileManager.default.removeItem(at: url)  // now read from the store
            #expect(blob.content == content)
            #expect(readAll(try #require(blob.contentStream)) == content)
        }
    }

    @Test func badFileURLsThrow() throws {
        try withStore { _, directory throws in
            do {
                _ = try Blob(contentType: "image/png", fileURL: directory.appendingPathComponent("missing.png"))
                Issue.record("expected notFound")
            } catch let error as CouchetteError {
                #expect(error.code == .notFound)
            }
            do {
                _ = try Blob(contentType: "image/png", fileURL: directory)
                Issue.record("a directory is not a file")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
            do {
                _ = try Blob(contentType: "image/png", fileURL: try #require(URL(string: "https://example.com/a.png")))
                Issue.record("a remote URL is not a file")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            }
        }
    }

    // MARK: - Equality

    @Test func equalityIsByDigest() throws {
        try withStore { store, _ throws in
            let text = Blob(contentType: "text/plain", data: Self.hello)
            let html = Blob(contentType: "text/html", data: Self.hello)
            let other = Blob(contentType: "text/plain", data: Data("other".utf8))
            #expect(text == html)
            #expect(text.hashValue == html.hashValue)
            #expect(text != other)
            #expect(Set([text, html, other]).count == 2)

            let streamed = Blob(contentType: "text/plain", contentStream: InputStream(data: Self.hello))
            let twin = Blob(contentType: "text/plain", contentStream: InputStream(data: Self.hello))
            #expect(streamed != text)  // no digest yet: identity only
            #expect(streamed != twin)
            #expect(Set([streamed, twin]).count == 2)
            #expect([streamed].contains(streamed))
            try streamed.install(into: store)
            #expect(streamed == text)
            #expect(streamed.hashValue == text.hashValue)
        }
    }

    // MARK: - Blobs from stored properties

    @Test func blobFromPropertiesReadsLazilyFromTheStore() throws {
        try withStore { store, _ throws in
            let properties: [String: Any] = [
                "@type": "blob", "content_type": "text/plain", "digest": Self.helloDigest, "length": 5,
            ]
            let missing = try Blob(properties: properties, store: store)
            #expect(missing.digest == Self.helloDigest)
            #expect(missing.contentType == "text/plain")
            #expect(missing.length == 5)
            #expect(missing.content == nil)
            #expect(missing.contentStream == nil)
            #expect(missing.toJSON() == Blob(contentType: "text/plain", data: Self.hello).toJSON())

            try store.write(data: Self.hello)
            #expect(missing.content == Self.hello)  // appears once the body is stored
            #expect(try Blob(properties: properties, store: store).content == Self.hello)
            #expect(try Blob(properties: properties, store: nil).content == nil)
        }
    }

    @Test func blobFromPropertiesWithoutContentCannotBeInstalled() throws {
        try withStore { store, directory throws in
            let blob = try Blob(properties: ["@type": "blob", "digest": Self.helloDigest], store: nil)
            #expect(blob.contentType == nil)
            #expect(blob.properties.count == 2)
            do {
                try blob.install(into: store)
                Issue.record("expected notFound")
            } catch let error as CouchetteError {
                #expect(error.code == .notFound)
            }
            // Installing into another store copies the stored body.
            try store.write(data: Self.hello)
            let stored = try Blob(properties: ["@type": "blob", "digest": Self.helloDigest], store: store)
            let other = try BlobStore(directory: directory.appendingPathComponent("Other", isDirectory: true))
            try stored.install(into: other)
            #expect(other.contains(try AttachmentDigest(parsing: Self.helloDigest)))
            #expect(stored.store === other)
        }
    }

    @Test func blobFromA1xAttachmentEntryWithInlineData() throws {
        let entry: [String: Any] = [
            "content_type": "text/plain", "digest": Self.helloDigest, "length": 5, "revpos": 1,
            "data": Self.hello.base64EncodedString(),
        ]
        let blob = try Blob(properties: entry, store: nil)
        #expect(blob.content == Self.hello)
        #expect(blob.digest == Self.helloDigest)
        let md5 = try Blob(properties: ["digest": AttachmentDigest.md5(of: Self.hello).description], store: nil)
        #expect(md5.digest?.hasPrefix("md5-") == true)
        #expect(md5.content == nil)
    }

    @Test func invalidPropertiesThrow() {
        let cases: [[String: Any]] = [
            ["@type": "blob"],
            ["@type": "blob", "digest": "nope"],
            ["@type": "image", "digest": Self.helloDigest],
            ["@type": "blob", "digest": Self.helloDigest, "length": -1],
            ["@type": "blob", "digest": Self.helloDigest, "content_type": 3],
            ["@type": "blob", "digest": Self.helloDigest, "data": Data("bad".utf8).base64EncodedString()],
        ]
        for properties in cases {
            do {
                _ = try Blob(properties: properties, store: nil)
                Issue.record("expected badInput for \(properties)")
            } catch let error as CouchetteError {
                #expect(error.code == .badInput)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
