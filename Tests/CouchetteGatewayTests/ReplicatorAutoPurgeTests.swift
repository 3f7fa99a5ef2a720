import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ReplicatorAutoPurgeTests

/// A document the user loses (it leaves every channel they read: a `_removed` stub; or they lose its channel: a
/// `revoked` change entry) is reported to the pull: with
/// `enableAutoPurge` (the default) the local copy is purged, and document listeners hear `accessRemoved` either
/// way; the stub is never stored as a revision, and a pull filter can keep the document.
@Suite("Replicator auto-purge on lost access", .timeLimit(.minutes(3)))
struct ReplicatorAutoPurgeTests {
    typealias LiteDatabase = ReplicatorGatewayTests.LiteDatabase

    enum Setting: String, CaseIterable { case autoPurge, keep, filterKeeps }
    /// How alice loses document `d`: it moves to another channel, or the admin takes her channel away.
    enum Loss: String, CaseIterable { case documentMoved, channelRevoked }

    @Test(arguments: Setting.allCases, Loss.allCases)
    func aDocumentTheUserLosesAccessTo(setting: Setting, loss: Loss) async throws {
        for transport in ReplicationProtocol.allCases {
            try await aDocumentTheUserLosesAccessTo(setting: setting, loss: loss, over: transport)
        }
    }

    func aDocumentTheUserLosesAccessTo(setting: Setting, loss: Loss, over transport: ReplicationProtocol) async throws {
        try await GatewayFixture.withRunningGateway(GatewayFixture.config(databases: [DatabaseConfig(name: "todo")])) {
            client, ports in
            let user = try await client.send(
                "PUT", port: ports.adminPort, path: "/todo/_user/alice",
                json: ["password": "pass", "admin_channels": ["a"]])
            #expect(user.status == 201)
            let first = try await client.send("PUT", port: ports.adminPort, path: "/todo/d", json: ["channels": ["a"], "v": 1])
            let kept = try await client.send("PUT", port: ports.adminPort, path: "/todo/k", json: ["channels": ["a"]])
            #expect(first.status == 201 && kept.status == 201)

            let phone = try LiteDatabase("phone")
            var config = ReplicatorConfiguration(
                target: URLEndpoint(url: transport.url(port: ports.publicPort)))
            var collection = CollectionConfiguration(collection: try phone.lists)
            if setting == .filterKeeps { collection.pullFilter = { _, flags in !flags.contains(.accessRemoved) } }
            config.addCollection(try phone.lists, config: collection)
            config.replicatorType = .pull
            config.authenticator = BasicAuthenticator(username: "alice", password: "pass")
            config.enableAutoPurge = setting != .keep
            try await Replicator(config: config).run()
            let pulled = try #require(try phone.lists.document(id: "d"))

            switch loss {
            case .documentMoved:
                // The document moves to a channel alice cannot read.
                let moved = try await client.send(
                    "PUT", port: ports.adminPort, path: "/todo/d?rev=\(try first.writtenRevision())",
                    json: ["channels": ["b"], "v": 2])
                #expect(moved.status == 201)
            case .channelRevoked:
                // The admin takes "a" away and gives "k" a channel of its own: alice keeps reading "k".
                let kept = try await client.send(
                    "PUT", port: ports.adminPort, path: "/todo/k?rev=\(try kept.writtenRevision())",
                    json: ["channels": ["a", "c"]])
                #expect(kept.status == 201)
                let revoked = try await client.send(
                    "PUT", port: ports.adminPort, path: "/todo/_user/alice", json: ["admin_channels": ["c"]])
                #expect(revoked.status == 200)
            }
            let replicator = Replicator(config: config)
            let queue = DispatchQueue(label: "document events")
            let events = Recorded<ReplicatedDocument>()
            let token = replicator.addDocumentReplicationListener(withQueue: queue) { replication in
                for document in replication.documents { events.append(document) }
            }
            defer { token.remove() }
            try await replicator.run()
            queue.sync {}
            #expect(replicator.status.error == nil)

            let now = try phone.lists.document(id: "d")
            let removals = events.values.filter { $0.flags.contains(.accessRemoved) }
            switch setting {
            case .autoPurge:
                #expect(now == nil)
                #expect(try phone.lists.revisionTree(documentID: "d") == nil, "purged, not deleted")
                #expect(removals.map(\.id) == ["d"])
            case .keep:
                #expect(now?.revisionID == pulled.revisionID, "kept as it was: the stub is not stored")
                #expect(now?.int(forKey: "v") == 1 && now?.contains(key: "_removed") == false)
                #expect(removals.map(\.id) == ["d"])
            case .filterKeeps:
                #expect(now?.revisionID == pulled.revisionID)
                #expect(removals.isEmpty)
            }
            #expect(try phone.lists.document(id: "k") != nil)
        }
    }
}
