import CouchetteTestSupport
import Couchette
import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorBLIPTests

/// What only the BLIP protocol has, between the Lite replicator (`ws://` endpoints) and the gateway: attachment and
/// blob content fetched with `getAttachment` both ways, delta sync on pulls, and the errors of a refused upgrade.
/// (Every other gateway-replication test runs with both protocols.)
@Suite("Replicator over BLIP", .timeLimit(.minutes(3)))
struct ReplicatorBLIPTests {
    typealias LiteDatabase = ReplicatorGatewayTests.LiteDatabase

    /// One-shot replication of `database` as GUEST with `ws://127.0.0.1:port/todo`; the finished replicator.
    @discardableResult
    static func replicate(_ database: LiteDatabase, port: some BinaryInteger, _ type: ReplicatorType) async throws
        -> Replicator
    {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: ReplicationProtocol.blip.url(port: port)))
        config.addCollection(try database.lists)
        config.replicatorType = type
        let replicator = Replicator(config: config)
        try await replicator.run()
        #expect(replicator.status.error == nil)
        return replicator
    }

    @Test("Attachments and blobs go up and come down with their bytes; an edit keeping them sends none again")
    func attachmentsAndBlobs() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let proxy = try ChaosProxy(targetPort: ports.publicPort, cutProbability: 0)
            defer { proxy.stop() }
            let phone = try LiteDatabase("phone")
            try ReplicatorBlobTests.saveAlbum(in: phone)
            _ = try phone.lists.putProperties(["type": "photo"], documentID: "photo")
            let withFile = try #require(try phone.lists.currentRevision(documentID: "photo")).createRevision()
            withFile.setAttachment(
                named: "image.bin", contentType: "application/octet-stream", content: ReplicatorAttachmentTests.largeContent)
            _ = try withFile.save()
            try await Self.replicate(phone, port: proxy.port, .push)

            // On the gateway: the blobs as blob_ attachments, the attachment with its bytes.
            let stored = try await client.send(port: ports.adminPort, path: "/todo/album").jsonValue()
            #expect(Set(stored["_attachments"]?.objectValue?.keys ?? [:].keys)
                == ["blob_/cover", "blob_/thumbnails/small", "blob_/scans/0"])
            #expect(try await client.send(port: ports.adminPort, path: "/todo/album/blob_%2Fcover").body
                == ReplicatorBlobTests.photo)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/photo/image.bin").body
                == ReplicatorAttachmentTests.largeContent)

            let tablet = try LiteDatabase("tablet")
            try await Self.replicate(tablet, port: proxy.port, .pull)
            try ReplicatorBlobTests.checkAlbum(in: tablet, "after the pull")
            #expect(try tablet.lists.currentRevision(documentID: "photo")?.attachment(named: "image.bin")?.content
                == ReplicatorAttachmentTests.largeContent)

            // An edit keeping the blobs: it goes down without their bytes.
            let edited = try #require(try phone.lists.document(id: "album")).toMutable()
            try phone.lists.save(document: edited.setString("Summer", forKey: "name"))
            try await Self.replicate(phone, port: proxy.port, .push)
            let before = proxy.bytesToClients
            try await Self.replicate(tablet, port: proxy.port, .pull)
            #expect(proxy.bytesToClients - before < 20_000)
            #expect(try tablet.lists.document(id: "album")?.string(forKey: "name") == "Summer")
            try ReplicatorBlobTests.checkAlbum(in: tablet, "after the second pull")
        }
    }

    @Test("With delta sync on, a one-property edit of large documents comes down as deltas: a fraction of the bytes")
    func pulledEditsComeAsDeltas() async throws {
        for deltaSync in [true, false] {
            var config = AdminGatewayFixture.config(guest: true)
            config.databases["todo"]?.deltaSync = deltaSync
            var bytes = 0
            try await AdminGatewayFixture.run(config) { _, ports, _ in
                let proxy = try ChaosProxy(targetPort: ports.publicPort, cutProbability: 0)
                defer { proxy.stop() }
                let phone = try LiteDatabase("phone")
                let tablet = try LiteDatabase("tablet")
                // ~4 KB per document that compresses badly (the socket is deflated): only a delta makes it small.
                var generator = SystemRandomNumberGenerator()
                let texts = (0..<20).map { _ in
                    Data((0..<3_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
                }
                try phone.database.inBatch {
                    for index in 0..<20 {
                        _ = try phone.lists.putProperties(["n": index, "text": texts[index]], documentID: "doc\(index)")
                    }
                }
                try await Self.replicate(phone, port: proxy.port, .push)
                try await Self.replicate(tablet, port: proxy.port, .pull)
                try phone.database.inBatch {
                    for index in 0..<20 {
                        let current = try #require(try phone.lists.currentRevision(documentID: "doc\(index)"))
                        _ = try current.createRevision(properties: ["n": index + 100, "text": texts[index]])
                    }
                }
                try await Self.replicate(phone, port: proxy.port, .push)
                let before = proxy.bytesToClients
                try await Self.replicate(tablet, port: proxy.port, .pull)
                for index in 0..<20 {
                    let pulled = try #require(try tablet.lists.document(id: "doc\(index)"))
                    #expect(pulled.int(forKey: "n") == index + 100)
                    #expect(pulled.string(forKey: "text") == texts[index])
                    #expect(
                        pulled.revisionID == (try phone.lists.currentRevision(documentID: "doc\(index)")?.revisionID))
                }
                bytes = proxy.bytesToClients - before
            }
            if deltaSync {
                #expect(bytes < 20 * 500, "\(bytes) bytes for 20 deltas")
            } else {
                #expect(bytes > 20 * 3_000, "\(bytes) bytes for 20 whole bodies")
            }
        }
    }

    @Test("Against a database allowing no conflicts the push offers with proposeChanges: updates go in, a conflicting edit is that document's 409 until its resolution is pushed")
    func pushToNoConflictsDatabase() async throws {
        var config = AdminGatewayFixture.config(guest: true)
        config.databases["todo"]?.allowConflicts = false
        try await AdminGatewayFixture.run(config) { client, ports, _ in
            let phone = try LiteDatabase("phone")
            for id in ["a", "b"] { _ = try phone.lists.putProperties(["type": "task-list", "name": id], documentID: id) }
            // `changes` is refused with 409, so the replicator proposes instead: everything goes up.
            try await Self.replicate(phone, port: ports.publicPort, .push)
            for id in ["a", "b"] {
                #expect(try await client.send(port: ports.adminPort, path: "/todo/\(id)").jsonValue()["name"] == .string(id))
            }
            // An update descends from the gateway's revision: it goes in.
            try phone.lists.save(document: try #require(try phone.lists.document(id: "a")).toMutable().setString("A2", forKey: "name"))
            try await Self.replicate(phone, port: ports.publicPort, .push)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/a").jsonValue()["name"] == "A2")

            // "b" is edited on both sides: the phone's edit is refused, and the gateway keeps one branch.
            let gatewayRevision = try await client.send(port: ports.adminPort, path: "/todo/b").jsonValue()["_rev"]
            let edited = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/b?rev=\(gatewayRevision?.stringValue ?? "")",
                json: ["type": "task-list", "name": "B on the gateway"])
            #expect(edited.status == 201)
            try phone.lists.save(document: try #require(try phone.lists.document(id: "b")).toMutable().setString("B on the phone", forKey: "name"))
            var push = ReplicatorConfiguration(target: URLEndpoint(url: ReplicationProtocol.blip.url(port: ports.publicPort)))
            push.addCollection(try phone.lists)
            push.replicatorType = .push
            let replicator = Replicator(config: push)
            let queue = DispatchQueue(label: "document events")
            let events = Recorded<ReplicatedDocument>()
            let token = replicator.addDocumentReplicationListener(withQueue: queue) { replication in
                for document in replication.documents { events.append(document) }
            }
            try await replicator.run()
            queue.sync {}
            token.remove()
            #expect(replicator.status.error == nil)
            #expect(events.values.map(\.id) == ["b"])
            #expect(events.values.first?.error?.status == 409)
            let stored = try await client.send(port: ports.adminPort, path: "/todo/b?conflicts=true").jsonValue()
            #expect(stored["name"] == "B on the gateway")
            #expect(stored["_conflicts"] == nil)

            // A pull brings the gateway's edit; the resolution is saved on top of it, so the next push is taken.
            var sync = ReplicatorConfiguration(target: URLEndpoint(url: ReplicationProtocol.blip.url(port: ports.publicPort)))
            var collection = CollectionConfiguration(collection: try phone.lists)
            collection.conflictResolver = ConflictResolver.custom { $0.localDocument }
            sync.addCollection(try phone.lists, config: collection)
            for _ in 0..<2 { try await Replicator(config: sync).run() }
            let converged = try await client.send(port: ports.adminPort, path: "/todo/b?conflicts=true").jsonValue()
            #expect(converged["name"] == "B on the phone")
            #expect(converged["_conflicts"] == nil)
            #expect(converged["_rev"]?.stringValue == (try phone.lists.document(id: "b")?.revisionID))
        }
    }

    @Test("A refused upgrade reports the database's answer: 401 for a wrong password, 404 for no such database")
    func refusedUpgrades() async throws {
        try await AdminGatewayFixture.run(try ReplicatorGatewayTests.todoConfig()) { _, ports, _ in
            let phone = try LiteDatabase("phone")
            try phone.addList("user1.groceries", name: "Groceries")
            var failure: CouchetteError?
            do {
                try await phone.sync(port: ports.publicPort, user: "user1", password: "wrong", over: .blip)
            } catch let error as CouchetteError {
                failure = error
            }
            #expect(failure?.status == 401)

            var config = ReplicatorConfiguration(
                target: URLEndpoint(url: ReplicationProtocol.blip.url(port: ports.publicPort, database: "nosuchdb")))
            config.addCollection(try phone.lists)
            config.authenticator = BasicAuthenticator(username: "user1", password: "pass")
            let replicator = Replicator(config: config)
            await #expect(throws: CouchetteError.self) { try await replicator.run() }
            #expect(replicator.status.error?.status == 404 || replicator.status.error?.status == 401)
        }
    }
}
