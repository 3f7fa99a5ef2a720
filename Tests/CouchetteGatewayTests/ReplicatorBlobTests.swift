import Couchette
import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorBlobTests

/// Couchbase Lite 3 blobs (`setBlob`, in nested dictionaries and arrays too) between the Lite replicator and a
/// gateway, seen through a recording proxy: their bytes travel as `blob_<pointer>` attachments whose metadata stays
/// in the body, the gateway keeps them as Sync Gateway does, and content the other side has is not sent again.
@Suite("Replicator and Couchbase Lite 3 blobs", .timeLimit(.minutes(5)))
struct ReplicatorBlobTests {
    typealias LiteDatabase = ReplicatorGatewayTests.LiteDatabase

    /// 300 KB that compress badly: large enough to go as a MIME part.
    static let photo = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ $0 >> 8) })
    static let thumbnail = Data("a small thumbnail".utf8)
    static let scan = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// A document with a blob at the top, one in a nested dictionary and one in an array.
    static func saveAlbum(in database: LiteDatabase) throws {
        let album = MutableDocument(id: "album")
            .setString("Holidays", forKey: "name")
            .setBlob(Blob(contentType: "image/jpeg", data: photo), forKey: "cover")
            .setDictionary(
                MutableDictionaryObject().setBlob(Blob(contentType: "image/png", data: thumbnail), forKey: "small"),
                forKey: "thumbnails")
            .setArray(MutableArrayObject().addBlob(Blob(contentType: "application/pdf", data: scan)), forKey: "scans")
        try database.lists.save(document: album)
    }

    /// Checks the album's three blobs read back with their content.
    static func checkAlbum(in database: LiteDatabase, _ when: Comment) throws {
        let album = try #require(try database.lists.document(id: "album"), when)
        #expect(album.blob(forKey: "cover")?.content == photo, when)
        #expect(album.blob(forKey: "cover")?.contentType == "image/jpeg", when)
        #expect(album.dictionary(forKey: "thumbnails")?.blob(forKey: "small")?.content == thumbnail, when)
        #expect(album.array(forKey: "scans")?.blob(at: 0)?.content == scan, when)
        // Blobs stay dictionaries: no `blob_` entries are left in the body.
        #expect(album.toJSONValue()["_attachments"] == nil, when)
        try database.database.performMaintenance(type: .integrityCheck)
    }

    @Test("Blobs go up and come down with their bytes; the gateway keeps them as blob_ attachments")
    func blobsTravelBothWays() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            try await RecordingHTTPProxy.run(targetPort: ports.publicPort) { proxy in
                let phone = try LiteDatabase("phone")
                try Self.saveAlbum(in: phone)
                try await ReplicatorAttachmentTests.replicate(phone, port: proxy.port, .push)

                // The large blob went as a MIME part, not as base64 in JSON, streamed from the blob store (chunked).
                let puts = proxy.exchanges.filter { $0.method == "PUT" && $0.path == "/todo/album" }
                #expect(puts.count == 1)
                #expect(puts.first?.contentType?.hasPrefix("multipart/related") == true)
                #expect(puts.first?.headers["transfer-encoding"] == "chunked")
                #expect((puts.first?.requestBytes ?? 0) < Self.photo.count + 20_000)

                // On the gateway: the body keeps the blob dictionaries; `_attachments` has the blob_ entries.
                let stored = try await client.send(port: ports.adminPort, path: "/todo/album").jsonValue()
                #expect(stored["cover"]?["@type"] == "blob")
                #expect(stored["cover"]?["digest"]?.stringValue == AttachmentDigest.sha1(of: Self.photo).description)
                let attachments = try #require(stored["_attachments"]?.objectValue)
                #expect(Set(attachments.keys) == ["blob_/cover", "blob_/thumbnails/small", "blob_/scans/0"])
                #expect(attachments["blob_/cover"]?["digest"] == stored["cover"]?["digest"])
                for (path, content) in [("blob_%2Fcover", Self.photo), ("blob_%2Fthumbnails%2Fsmall", Self.thumbnail),
                                        ("blob_%2Fscans%2F0", Self.scan)] {
                    #expect(try await client.send(port: ports.adminPort, path: "/todo/album/\(path)").body == content)
                }

                // Pulled into an empty database: the blobs arrive with their bytes.
                let tablet = try LiteDatabase("tablet")
                try await ReplicatorAttachmentTests.replicate(tablet, port: proxy.port, .pull)
                try Self.checkAlbum(in: tablet, "after the pull")

                // An edit that keeps the blobs: no blob bytes go up or come down again.
                proxy.clear()
                let edited = try #require(try phone.lists.document(id: "album")).toMutable()
                try phone.lists.save(document: edited.setString("Summer", forKey: "name"))
                try await ReplicatorAttachmentTests.replicate(phone, port: proxy.port, .push)
                try await ReplicatorAttachmentTests.replicate(tablet, port: proxy.port, .pull)
                #expect(!proxy.exchanges.contains { $0.method == "PUT" && $0.path == "/todo/album" })
                #expect(proxy.exchanges.allSatisfy { $0.requestBytes < 20_000 && $0.responseBytes < 20_000 },
                        "\(proxy.exchanges.map { "\($0.method) \($0.uri) \($0.requestBytes)/\($0.responseBytes)" })")
                #expect(try tablet.lists.document(id: "album")?.string(forKey: "name") == "Summer")
                try Self.checkAlbum(in: tablet, "after the second pull")

                // Another document holding the same photo: the tablet has those bytes, so the pull does not fetch them.
                proxy.clear()
                try phone.lists.save(
                    document: MutableDocument(id: "copy").setBlob(Blob(contentType: "image/jpeg", data: Self.photo), forKey: "p"))
                try await ReplicatorAttachmentTests.replicate(phone, port: proxy.port, .push)
                let pushed = proxy.exchanges.count
                try await ReplicatorAttachmentTests.replicate(tablet, port: proxy.port, .pull)
                let pulled = proxy.exchanges.dropFirst(pushed)
                #expect(pulled.allSatisfy { $0.responseBytes < 20_000 }, "\(pulled.map { "\($0.uri) \($0.responseBytes)" })")
                #expect(try tablet.lists.document(id: "copy")?.blob(forKey: "p")?.content == Self.photo)

                // A blob changed on the tablet goes back up and reaches the phone.
                let replaced = try #require(try tablet.lists.document(id: "album")).toMutable()
                try tablet.lists.save(
                    document: replaced.setBlob(Blob(contentType: "text/plain", data: Data("new cover".utf8)), forKey: "cover"))
                try await ReplicatorAttachmentTests.replicate(tablet, port: proxy.port, .push)
                try await ReplicatorAttachmentTests.replicate(phone, port: proxy.port, .pull)
                #expect(try phone.lists.document(id: "album")?.blob(forKey: "cover")?.content == Data("new cover".utf8))
            }
        }
    }

    /// Saves documents `a`, `b` and `c` holding the same photo and pushes them in one run through `port`, one
    /// document per batch (so the later ones know what the first sent); returns the finished replicator.
    static func pushThreeCopiesOfThePhoto(port: Int) async throws -> Replicator {
        let phone = try LiteDatabase("phone")
        for id in ["a", "b", "c"] {
            try phone.lists.save(
                document: MutableDocument(id: id).setBlob(Blob(contentType: "image/jpeg", data: photo), forKey: "p"))
        }
        var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: "http://127.0.0.1:\(port)/todo")!))
        config.addCollection(try phone.lists)
        config.replicatorType = .push
        config.batchSize = 1
        let replicator = Replicator(config: config)
        try await replicator.run()
        return replicator
    }

    @Test("One push: the same blob in several documents goes up once, the others as stubs the gateway resolves")
    func aBlobSentOnceInASessionIsNotSentAgain() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            try await RecordingHTTPProxy.run(targetPort: ports.publicPort) { proxy in
                let replicator = try await Self.pushThreeCopiesOfThePhoto(port: proxy.port)
                #expect(replicator.status.error == nil)
                let heavy = proxy.exchanges.filter { $0.requestBytes > Self.photo.count }
                #expect(heavy.count == 1, "\(proxy.exchanges.map { "\($0.method) \($0.uri) \($0.requestBytes)" })")
                for id in ["a", "b", "c"] {
                    #expect(try await client.send(port: ports.adminPort, path: "/todo/\(id)/blob_%2Fp").body == Self.photo)
                }
            }
        }
    }

    @Test("A server that cannot resolve a stub by digest gets the document again whole")
    func aRefusedStubIsSentAgainWhole() async throws {
        try await GatewayFixture.withRunningGateway { _, first in
            try await GatewayFixture.withRunningGateway { client, second in
                // After the first document is stored on the first gateway, the proxy sends everything to the second,
                // which has never seen the photo: the session's stub for it is refused there.
                try await RecordingHTTPProxy.run(
                    targetPort: first.publicPort,
                    switchTarget: { $0.path == "/todo/_bulk_docs" || $0.method == "PUT" ? second.publicPort : nil }
                ) { proxy in
                    let replicator = try await Self.pushThreeCopiesOfThePhoto(port: proxy.port)
                    #expect(replicator.status.error == nil)
                    #expect(replicator.rejectedDocuments.isEmpty, "\(replicator.rejectedDocuments.map { "\($0.id): \($0.error!)" })")
                    for id in ["b", "c"] {
                        #expect(try await client.send(port: second.adminPort, path: "/todo/\(id)/blob_%2Fp").body == Self.photo)
                    }
                    // b went first as a stub (a small `_bulk_docs`, refused there), then whole; c whole at once (the
                    // server was found not to resolve stubs); a whole to the first gateway.
                    let log = "\(proxy.exchanges.map { "\($0.method) \($0.path) \($0.requestBytes) \($0.status)" })"
                    let stubbed = proxy.exchanges.filter { $0.path == "/todo/_bulk_docs" }
                    #expect(stubbed.count == 1 && stubbed.allSatisfy { $0.requestBytes < 10_000 }, "\(log)")
                    #expect(proxy.exchanges.filter { $0.requestBytes > Self.photo.count }.count == 3, "\(log)")
                }
            }
        }
    }

    @Test("A 3 MB blob goes up streamed from the store and comes down through a temporary file, byte for byte")
    func aLargeBlobStreamsBothWays() async throws {
        var state: UInt64 = 42
        let large = Data((0..<3_000_000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
        try await GatewayFixture.withRunningGateway { client, ports in
            try await RecordingHTTPProxy.run(targetPort: ports.publicPort) { proxy in
                let phone = try LiteDatabase("phone")
                try phone.lists.save(
                    document: MutableDocument(id: "video").setBlob(Blob(contentType: "video/mp4", data: large), forKey: "clip"))
                try await ReplicatorAttachmentTests.replicate(phone, port: proxy.port, .push)
                let put = proxy.exchanges.first { $0.method == "PUT" && $0.path == "/todo/video" }
                #expect(put?.headers["transfer-encoding"] == "chunked")
                #expect(try await client.send(port: ports.adminPort, path: "/todo/video/blob_%2Fclip").body == large)

                let tablet = try LiteDatabase("tablet")
                try await ReplicatorAttachmentTests.replicate(tablet, port: proxy.port, .pull)
                let pulled = try #require(try tablet.lists.document(id: "video")?.blob(forKey: "clip"))
                #expect(pulled.length == UInt64(large.count))
                #expect(pulled.content == large)
                try tablet.database.performMaintenance(type: .integrityCheck)
            }
        }
    }
}
