import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// The stored metadata (revision tree, channels per revision, grants with their sequences, channels left, expiry)
/// reads back as it was written.
@Suite(.timeLimit(.minutes(2))) struct StoredDocumentCodecTests {
    static func randomDocument(seed: UInt64) throws -> StoredDocument {
        var generator = SplitMix64(state: seed)
        let names = ["type", "name", "owner", "é\"", ""]
        var document = StoredDocument(id: "doc\(seed)")
        document.sequence = 1 + generator.next() % 1_000
        var parent: RevisionID?
        for _ in 0..<(1 + Int(generator.next() % 4)) {
            parent = try document.tree.addLocalEdit(
                parent: parent, body: RandomJSON.object(&generator, depth: 1, names: names), deleted: false)
        }
        if generator.next() % 2 == 0, let root = document.tree.nodes.first?.id {
            // A conflicting branch, made elsewhere.
            let branch = try RevisionID(parsing: "\(root.generation + 1)-\(String(repeating: "f", count: 32))")
            try document.tree.insert(branch, body: ["branch": true], deleted: generator.next() % 3 == 0, history: [branch, root])
        }
        for node in document.tree.nodes where generator.next() % 3 != 0 {
            document.channels[node.id] = Set((0..<Int(generator.next() % 3)).map { "ch\($0)\(generator.next() % 5)" })
        }
        for user in ["alice", "role:moderator"] where generator.next() % 2 == 0 {
            let channels = Set((0..<(1 + Int(generator.next() % 3))).map { "list.\($0)" })
            document.access[user] = channels
            for channel in channels {
                document.grantSequences[DocumentGrant(kind: .channel, principal: user, target: channel)] =
                    generator.next() % document.sequence
            }
        }
        if generator.next() % 2 == 0 {
            document.roleAccess["bob"] = ["moderator"]
            document.grantSequences[DocumentGrant(kind: .role, principal: "bob", target: "moderator")] = document.sequence
        }
        if generator.next() % 2 == 0 { document.channelRemovals["old,\u{e9}"] = document.sequence - 1 }
        // Left at this very change: written as null, read back as the document's sequence.
        if generator.next() % 2 == 0 { document.channelRemovals["left"] = document.sequence }
        if generator.next() % 2 == 0 { document.expiry = Date(timeIntervalSince1970: 1_800_000_000.5) }
        return document
    }

    @Test("Metadata written reads back equal", arguments: 0..<60)
    func roundTrip(seed: UInt64) throws {
        let document = try Self.randomDocument(seed: seed)
        let winnerBody = (document.winner?.body ?? .object([:])).serialized()
        let decoded = try StoredDocumentCodec.decode(
            id: document.id, sequence: document.sequence, winnerBody: winnerBody,
            metadata: StoredDocumentCodec.encodeMetadata(document))
        #expect(decoded == document)
    }
}
