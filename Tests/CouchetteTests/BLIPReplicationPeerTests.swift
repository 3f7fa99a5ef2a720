import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import Couchette

// MARK: - BLIPReplicationPeerTests

/// The BLIP peer's pull, against a ``URLEndpointListener``: a batch of changes is answered on the connection it came
/// on, and one that can no longer be answered fails its pass instead of passing for empty.
@Suite("BLIP replication peer", .timeLimit(.minutes(2)))
struct BLIPReplicationPeerTests {
    @Test("A batch whose connection went before it was answered throws: the pass goes again from its checkpoint")
    func unanswerableBatchThrows() async throws {
        let directory = TemporaryDirectory()
        let source = try directory.open("source")
        defer { try? source.close() }
        let documents = try source.defaultCollection()
        for id in ["a", "b", "c"] { _ = try documents.putProperties(["type": "task-list"], documentID: id) }
        var listenerConfig = URLEndpointListenerConfiguration(collections: [documents])
        listenerConfig.networkInterface = "127.0.0.1"
        listenerConfig.disableTLS = true
        let listener = URLEndpointListener(config: listenerConfig)
        try await listener.start()
        let port = try #require(listener.port)
        let url = try #require(URL(string: "ws://127.0.0.1:\(port)/source"))
        let target = try directory.open("target")
        defer { try? target.close() }
        let peer = BLIPReplicationPeer(
            url: url, authenticator: nil, headers: [:], continuous: false,
            trust: ServerTrust(ReplicatorConfiguration(target: URLEndpoint(url: url))),
            local: BLIPLocalContent(collection: try target.defaultCollection()))

        let first = try await peer.changes(since: nil, limit: 200)
        #expect(first.changes.map(\.documentID).sorted() == ["a", "b", "c"])
        let wanted = first.changes.map { change in
            WantedRevision(documentID: change.documentID, revisionID: change.revisionIDs[0], knownAncestors: [])
        }
        // The connection goes and the next batch is listed on a new one, as when a pass's connection is cut while
        // it works out what this batch lacks.
        await peer.close()
        _ = try await peer.changes(since: first.lastSequence, limit: 200)
        await #expect(throws: CouchetteError.self) { try await peer.revisions(wanted, of: first) }

        // On a connection that stays, the same batch brings its revisions.
        await peer.close()
        let again = try await peer.changes(since: nil, limit: 200)
        let revisions = try await peer.revisions(wanted, of: again)
        #expect(revisions.map(\.documentID).sorted() == ["a", "b", "c"])
        await peer.close()
        await listener.stop()
    }
}
