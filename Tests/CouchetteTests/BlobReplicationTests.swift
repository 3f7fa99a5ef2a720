import Couchette
import CouchetteTestSupport
import Foundation
import Testing

/// Couchbase Lite 3 blobs replicated between local databases: their bytes arrive (top-level, nested in
/// dictionaries and in arrays), both ways, between plain and encrypted databases, and a blob the target holds is not
/// copied again.
@Suite(.timeLimit(.minutes(2))) struct BlobReplicationTests {
    static let cover = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 7) })
    static let small = Data("thumbnail".utf8)
    static let scan = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 17) })

    static func replicate(_ source: Database, to target: Database, _ type: ReplicatorType) async throws {
        var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: target))
        config.addCollection(try source.defaultCollection())
        config.replicatorType = type
        let replicator = Replicator(config: config)
        try await replicator.run()
        #expect(replicator.status.error == nil)
    }

    static func saveAlbum(in db: Database) throws {
        try db.defaultCollection().save(
            document: MutableDocument(id: "album")
                .setBlob(Blob(contentType: "image/jpeg", data: cover), forKey: "cover")
                .setDictionary(
                    MutableDictionaryObject().setBlob(Blob(contentType: "image/png", data: small), forKey: "a/b~c"),
                    forKey: "thumbnails")
                .setArray(
                    MutableArrayObject().addString("first").addBlob(Blob(contentType: "application/pdf", data: scan)),
                    forKey: "scans"))
    }

    static func checkAlbum(in db: Database, _ when: Comment) throws {
        let album = try #require(try db.defaultCollection().document(id: "album"), when)
        #expect(album.blob(forKey: "cover")?.content == cover, when)
        #expect(album.dictionary(forKey: "thumbnails")?.blob(forKey: "a/b~c")?.content == small, when)
        #expect(album.array(forKey: "scans")?.blob(at: 1)?.content == scan, when)
        #expect(album.toJSONValue()["_attachments"] == nil, when)
        try db.performMaintenance(type: .integrityCheck)
    }

    /// The files of a database's blob store.
    static func blobFiles(_ db: Database) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: db.path! + "/Attachments").filter { $0.hasSuffix(".blob") }
    }

    enum Pair: String, CaseIterable { case plainToPlain, plainToEncrypted, encryptedToPlain }

    @Test(arguments: Pair.allCases)
    func blobsArriveWithTheirBytesBothWays(pair: Pair) async throws {
        try await withDatabases("source", "target", configure: { name, config in
            if name == "source" && pair == .encryptedToPlain { config.encryptionKey = .password("s") }
            if name == "target" && pair == .plainToEncrypted { config.encryptionKey = .password("t") }
        }) { source, target in
            try Self.saveAlbum(in: source)
            try await Self.replicate(source, to: target, .push)
            try Self.checkAlbum(in: target, "pushed \(pair)")
            #expect(try Self.blobFiles(target).count == 3)

            // A blob replaced on the target comes back with a pull.
            let replaced = try #require(try target.defaultCollection().document(id: "album")).toMutable()
            try target.defaultCollection().save(
                document: replaced.setBlob(Blob(contentType: "text/plain", data: Data("new".utf8)), forKey: "cover"))
            try await Self.replicate(source, to: target, .pull)
            #expect(try source.defaultCollection().document(id: "album")?.blob(forKey: "cover")?.content == Data("new".utf8))
            try source.performMaintenance(type: .integrityCheck)
        }
    }

    @Test func aBlobTheTargetHoldsIsNotCopiedAgain() async throws {
        try await withDatabases("source", "target") { source, target in
            try Self.saveAlbum(in: source)
            try await Self.replicate(source, to: target, .push)
            let files = try Self.blobFiles(target)
            let attributes = try files.map {
                try FileManager.default.attributesOfItem(atPath: target.path! + "/Attachments/" + $0)[.modificationDate] as? Date
            }
            // Another document with the same cover, and an edit of the album: nothing new in the target's store.
            try source.defaultCollection().save(
                document: MutableDocument(id: "copy").setBlob(Blob(contentType: "image/jpeg", data: Self.cover), forKey: "c"))
            let edit = try #require(try source.defaultCollection().document(id: "album")).toMutable()
            try source.defaultCollection().save(document: edit.setString("edited", forKey: "note"))
            try await Self.replicate(source, to: target, .push)
            #expect(try Self.blobFiles(target) == files)
            #expect(try files.map {
                try FileManager.default.attributesOfItem(atPath: target.path! + "/Attachments/" + $0)[.modificationDate] as? Date
            } == attributes)
            #expect(try target.defaultCollection().document(id: "copy")?.blob(forKey: "c")?.content == Self.cover)
            try Self.checkAlbum(in: target, "after the edit")
        }
    }

    /// Attachments whose names merely start with `blob_` are ordinary attachments: they replicate and stay.
    @Test func attachmentsNamedLikeBlobsStayAttachments() async throws {
        try await withDatabases("source", "target") { source, target in
            let photo = Data("a photo from 2019".utf8)
            let note = Data("a note".utf8)
            let revision = try source.defaultCollection().putProperties(["type": "album"], documentID: "old").createRevision()
            revision.setAttachment(named: "blob_2019.jpg", contentType: "image/jpeg", content: photo)
            revision.setAttachment(named: "blob_/nowhere", contentType: "text/plain", content: note)
            _ = try revision.save()
            try await Self.replicate(source, to: target, .push)
            let copy = try #require(try target.defaultCollection().currentRevision(documentID: "old"))
            #expect(copy.attachment(named: "blob_2019.jpg")?.content == photo)
            #expect(copy.attachment(named: "blob_/nowhere")?.content == note, "a pointer to no blob is kept too")
        }
    }
}
