import Couchette
import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorAttachmentTests

/// Attachments between the Lite replicator and a gateway, seen through a recording proxy: small ones travel inline,
/// large ones as `multipart/related` parts, and only what the other side lacks is sent; a peer without `_bulk_get`
/// is read with `GET ?open_revs=`.
@Suite("Replicator attachments and old peers", .timeLimit(.minutes(5)))
struct ReplicatorAttachmentTests {
    typealias LiteDatabase = ReplicatorGatewayTests.LiteDatabase

    /// 100 KB that compress badly.
    static let largeContent = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ $0 >> 8) })
    static let smallContent = Data("a short note".utf8)

    /// One-shot replication of `database` as GUEST through `port`.
    static func replicate(_ database: LiteDatabase, port: Int, _ type: ReplicatorType) async throws {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: URL(string: "http://127.0.0.1:\(port)/todo")!))
        config.addCollection(try database.lists)
        config.replicatorType = type
        let replicator = Replicator(config: config)
        try await replicator.run()
        #expect(replicator.status.error == nil)
    }

    /// Saves a new revision of `id` with `properties`, keeping its attachments.
    static func edit(_ database: LiteDatabase, _ id: String, _ properties: [String: Any]) throws {
        let revision = try database.lists.currentRevision(documentID: id)!.createRevision()
        revision.userProperties = properties
        _ = try revision.save()
    }

    @Test("A large attachment goes up as multipart and down as a MIME part; unchanged attachments are not sent again")
    func attachmentsTravelOnlyWhenMissing() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            try await RecordingHTTPProxy.run(targetPort: ports.publicPort) { proxy in
                let phone = try LiteDatabase("phone")
                _ = try phone.lists.putProperties(["type": "photo", "caption": "first"], documentID: "photo")
                let withFiles = try phone.lists.currentRevision(documentID: "photo")!.createRevision()
                withFiles.setAttachment(named: "image.bin", contentType: "application/octet-stream", content: Self.largeContent)
                withFiles.setAttachment(named: "note.txt", contentType: "text/plain", content: Self.smallContent)
                _ = try withFiles.save()
                _ = try phone.lists.putProperties(["type": "plain"], documentID: "plain")

                try await Self.replicate(phone, port: proxy.port, .push)
                let puts = proxy.exchanges.filter { $0.method == "PUT" && $0.path == "/todo/photo" }
                #expect(puts.count == 1)
                #expect(puts.first?.contentType?.hasPrefix("multipart/related") == true)
                #expect((puts.first?.requestBytes ?? 0) > Self.largeContent.count)
                #expect(try await client.send(port: ports.adminPort, path: "/todo/photo/image.bin").body == Self.largeContent)
                #expect(try await client.send(port: ports.adminPort, path: "/todo/photo/note.txt").body == Self.smallContent)

                // A new revision without new attachments: a small `_bulk_docs`, stubs only.
                proxy.clear()
                try Self.edit(phone, "photo", ["type": "photo", "caption": "second"])
                try await Self.replicate(phone, port: proxy.port, .push)
                #expect(!proxy.exchanges.contains { $0.method == "PUT" && $0.path == "/todo/photo" })
                let bulk = proxy.exchanges.filter { $0.path == "/todo/_bulk_docs" }
                #expect(bulk.count == 1)
                #expect(bulk.allSatisfy { $0.requestBytes < 4_000 })
                #expect(try await client.send(port: ports.adminPort, path: "/todo/photo/image.bin").body == Self.largeContent)

                // Pulled into an empty database: the content comes with the revision that lacks it.
                proxy.clear()
                let tablet = try LiteDatabase("tablet")
                try await Self.replicate(tablet, port: proxy.port, .pull)
                let copy = try #require(try tablet.lists.currentRevision(documentID: "photo"))
                #expect(copy.properties?["caption"] as? String == "second")
                #expect(copy.attachment(named: "image.bin")?.content == Self.largeContent)
                #expect(copy.attachment(named: "note.txt")?.content == Self.smallContent)
                let reads = proxy.exchanges.filter { $0.method == "GET" && $0.path == "/todo/photo" }
                #expect(reads.count == 1)
                #expect(try tablet.lists.currentRevision(documentID: "plain") != nil)

                // Another edit: the tablet has the attachments, so the pull reads no document again.
                proxy.clear()
                try Self.edit(phone, "photo", ["type": "photo", "caption": "third"])
                try await Self.replicate(phone, port: proxy.port, .push)
                try await Self.replicate(tablet, port: proxy.port, .pull)
                #expect(!proxy.exchanges.contains { $0.method == "GET" && $0.path == "/todo/photo" })
                let again = try #require(try tablet.lists.currentRevision(documentID: "photo"))
                #expect(again.properties?["caption"] as? String == "third")
                #expect(again.attachment(named: "image.bin")?.content == Self.largeContent)
            }
        }
    }

    @Test("A peer without _bulk_get: revisions and attachments come from GET ?open_revs=")
    func pullFromAPeerWithoutBulkGet() async throws {
        try await GatewayFixture.withRunningGateway { _, ports in
            try await RecordingHTTPProxy.run(
                targetPort: ports.publicPort, refuses: { $0.path.hasSuffix("/_bulk_get") }
            ) { proxy in
                let phone = try LiteDatabase("phone")
                for index in 0..<5 { _ = try phone.lists.putProperties(["n": index], documentID: "doc\(index)") }
                try Self.edit(phone, "doc0", ["n": 0, "edited": true])
                let withFile = try phone.lists.currentRevision(documentID: "doc1")!.createRevision()
                withFile.setAttachment(named: "image.bin", contentType: "application/octet-stream", content: Self.largeContent)
                _ = try withFile.save()
                try await Self.replicate(phone, port: proxy.port, .push)

                let tablet = try LiteDatabase("tablet")
                try await Self.replicate(tablet, port: proxy.port, .pull)
                #expect(try tablet.documentIDs() == Set((0..<5).map { "doc\($0)" }))
                let edited = try #require(try tablet.lists.currentRevision(documentID: "doc0"))
                #expect(edited.properties?["edited"] as? Bool == true)
                #expect(try edited.history().count == 2)
                #expect(try tablet.lists.currentRevision(documentID: "doc1")?.attachment(named: "image.bin")?.content
                    == Self.largeContent)
                #expect(proxy.exchanges.filter { $0.path.hasSuffix("/_bulk_get") }.count == 1)
                #expect(proxy.exchanges.filter { $0.method == "GET" && $0.uri.contains("open_revs=") }.count == 5)
            }
        }
    }
}
