import Couchette
import CouchetteTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5))) struct BlobIntegrationTests {
    @Test func documentsHoldBlobsStoredOncePerDigest() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        let jpeg = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try tasks.save(document: MutableDocument(id: "t1").setBlob(Blob(contentType: "image/jpeg", data: jpeg), forKey: "image"))
        try tasks.save(document: MutableDocument(id: "t2").setBlob(Blob(contentType: "image/jpeg", data: jpeg), forKey: "image"))
        let blob = try #require(try tasks.document(id: "t1")?.blob(forKey: "image"))
        #expect(blob.content == jpeg)
        #expect(blob.contentType == "image/jpeg")
        #expect(blob.length == 10_000)
        #expect(blob.digest?.hasPrefix("sha1-") == true)
        let stored = try #require(try tasks.document(id: "t1")?.dictionary(forKey: "image")?.toDictionary())
        #expect(stored["@type"] as? String == "blob")
        #expect(try db.getBlob(properties: stored)?.content == jpeg)
        let files = try FileManager.default.contentsOfDirectory(atPath: db.path! + "/Attachments")
        #expect(files.filter { $0.hasSuffix(".blob") }.count == 1)
    }

    /// Blobs inside arrays (`MutableArrayObject.addBlob`, `insertBlob(_:at:)`, and in a dictionary nested in an array
    /// of dictionaries) are installed on save, read back after reopening, and kept by compaction.
    @Test func blobsInsideArraysAreStoredReadAndKept() throws {
        let directory = TemporaryDirectory()
        var db = try directory.open()
        let photos = (0..<4).map { index in Data((0..<(1_000 + index)).map { UInt8(truncatingIfNeeded: $0 &* (index + 3)) }) }
        let gallery = MutableArrayObject()
            .addBlob(Blob(contentType: "image/jpeg", data: photos[0]))
            .addString("caption")
            .addBlob(Blob(contentType: "image/png", data: photos[1]))
        gallery.insertBlob(Blob(contentType: "image/gif", data: photos[2]), at: 0)
        let nested = MutableArrayObject().addDictionary(
            MutableDictionaryObject().setBlob(Blob(contentType: "image/webp", data: photos[3]), forKey: "thumb"))
        try db.defaultCollection().save(
            document: MutableDocument(id: "album").setArray(gallery, forKey: "gallery").setArray(nested, forKey: "nested"))
        try db.close()

        db = try directory.open()
        defer { try? db.close() }
        func check(_ when: Comment) throws {
            let album = try #require(try db.defaultCollection().document(id: "album"), when)
            let array = try #require(album.array(forKey: "gallery"), when)
            #expect(array.count == 4, when)
            #expect(array.blob(at: 0)?.content == photos[2], when)
            #expect(array.blob(at: 0)?.contentType == "image/gif", when)
            #expect(array.blob(at: 1)?.content == photos[0], when)
            #expect(array.string(at: 2) == "caption", when)
            #expect(array.blob(at: 2) == nil, when)
            #expect(array.blob(at: 3)?.content == photos[1], when)
            #expect(array.blob(at: 3)?.length == UInt64(photos[1].count), when)
            let thumb = album.array(forKey: "nested")?.dictionary(at: 0)?.blob(forKey: "thumb")
            #expect(thumb?.content == photos[3], when)
            let stored = try #require(array.dictionary(at: 1)?.toDictionary(), when)
            #expect(stored["@type"] as? String == "blob", when)
            #expect(stored["digest"] as? String == array.blob(at: 1)?.digest, when)
        }
        try check("after reopening")
        try db.performMaintenance(type: .compact)
        try check("after compaction")
        let files = try FileManager.default.contentsOfDirectory(atPath: db.path! + "/Attachments")
        #expect(files.filter { $0.hasSuffix(".blob") }.count == 4)
    }

    @Test func attachmentsThroughTheRevisionAPIAndCompaction() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open { $0.maxRevTreeDepth = 3 }
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        let base = try lists.putProperties(["type": "task-list", "name": "Groceries"], documentID: "l")
        let withImage = base.createRevision()
        withImage.setAttachment(named: "image", contentType: "image/png", content: Data("old".utf8))
        let saved = try withImage.save()
        #expect(saved.attachmentNames == ["image"])
        #expect(saved.attachment(named: "image")?.content == Data("old".utf8))
        let meta = try #require((saved.properties?["_attachments"] as? [String: Any])?["image"] as? [String: Any])
        #expect(meta["revpos"] as? Int == 2)
        #expect(meta["stub"] as? Bool == true)

        let replaced = saved.createRevision()
        replaced.setAttachment(named: "image", contentType: "image/png", content: Data("new".utf8))
        let third = try replaced.save()
        #expect(third.attachment(named: "image")?.content == Data("new".utf8))
        // An unchanged attachment keeps its revpos.
        let renamed = third.createRevision()
        renamed["name"] = "Shopping"
        let fourth = try renamed.save()
        let kept = try #require((fourth.properties?["_attachments"] as? [String: Any])?["image"] as? [String: Any])
        #expect(kept["revpos"] as? Int == 3)

        // Only the current revision's parent keeps its body among the ancestors.
        #expect(try lists.revision(documentID: "l", revisionID: third.revisionID!)?.propertiesAvailable == true)
        #expect(try lists.revision(documentID: "l", revisionID: saved.revisionID!)?.propertiesAvailable == false)
        try db.performMaintenance(type: .compact)
        // Ancestors lose their bodies; the old attachment's blob is gone; the current one stays.
        #expect(try lists.revision(documentID: "l", revisionID: third.revisionID!)?.propertiesAvailable == false)
        #expect(try lists.revisionTree(documentID: "l")?.nodes.count == 3)
        let files = try FileManager.default.contentsOfDirectory(atPath: db.path! + "/Attachments")
        #expect(files.filter { $0.hasSuffix(".blob") }.count == 1)
        #expect(try lists.currentRevision(documentID: "l")?.attachment(named: "image")?.content == Data("new".utf8))
        try db.performMaintenance(type: .integrityCheck)
    }

    @Test func integrityCheckReportsAMissingBlob() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        try tasks.save(document: MutableDocument(id: "t").setBlob(Blob(contentType: "text/plain", data: Data("x".utf8)), forKey: "note"))
        try db.performMaintenance(type: .integrityCheck)
        try db.performMaintenance(type: .optimize)
        try db.performMaintenance(type: .fullOptimize)
        try db.performMaintenance(type: .reindex)
        let folder = db.path! + "/Attachments"
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) {
            try FileManager.default.removeItem(atPath: folder + "/" + file)
        }
        do {
            try db.performMaintenance(type: .integrityCheck)
            Issue.record("expected the check to fail")
        } catch let error as CouchetteError {
            #expect(error.code == .corrupt)
            #expect(error.message.contains("missing"))
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct ExpirationTests {
    @Test func expiredDocumentsArePurgedAutomatically() async throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let lists = try db.defaultCollection()
        try lists.save(document: MutableDocument(id: "draft"))
        try lists.save(document: MutableDocument(id: "keep"))
        let later = Date().addingTimeInterval(86_400)
        try lists.setDocumentExpiration(id: "keep", expiration: later)
        #expect(try lists.getDocumentExpiration(id: "keep")?.timeIntervalSince1970 == later.timeIntervalSince1970)
        try lists.setDocumentExpiration(id: "keep", expiration: nil)
        #expect(try lists.getDocumentExpiration(id: "keep") == nil)
        #expect(throws: CouchetteError.self) { try lists.setDocumentExpiration(id: "absent", expiration: later) }

        let stream = lists.documentChanges(id: "draft")
        try lists.setDocumentExpiration(id: "draft", expiration: Date().addingTimeInterval(0.2))
        let purge = try #require(await next(stream))
        #expect(purge.isDeletion)
        #expect(try lists.currentRevision(documentID: "draft") == nil)
        #expect(try lists.document(id: "keep") != nil)
    }
}
