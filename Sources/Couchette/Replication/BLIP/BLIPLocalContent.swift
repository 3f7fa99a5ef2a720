import CouchetteCore
import Foundation

// MARK: - BLIPLocalContent

/// What a BLIP connection finds in the local collection it replicates (the replicator's and the listener's): the
/// attachment content stored here, and revision bodies to apply pulled deltas to.
struct BLIPLocalContent: Sendable {
    /// Whether an attachment's content is stored here (then it is not fetched).
    var holds: @Sendable (AttachmentDigest) -> Bool
    /// The body of a revision stored here, as it would be sent (`_attachments` stubs), for applying a delta.
    var body: @Sendable (_ documentID: String, _ revisionID: String) async throws -> [String: JSONValue]?
    /// The bytes of a stored attachment, for proving to the other side that this side holds them.
    var content: @Sendable (AttachmentDigest) -> Data?

    /// What `collection`'s database holds.
    init(collection: Collection) {
        let database = collection.database
        let peer = LocalReplicationPeer(collection: collection)
        holds = { [weak database] digest in database?.currentBlobStore?.contains(digest) ?? false }
        body = { documentID, revisionID in
            let wanted = WantedRevision(documentID: documentID, revisionID: revisionID, knownAncestors: [revisionID])
            return try await peer.revisions([wanted]).first.map(\.body)
        }
        content = { [weak database] digest in try? database?.currentBlobStore?.data(for: digest) }
    }

    init(
        holds: @escaping @Sendable (AttachmentDigest) -> Bool,
        body: @escaping @Sendable (String, String) async throws -> [String: JSONValue]?,
        content: @escaping @Sendable (AttachmentDigest) -> Data?
    ) {
        self.holds = holds
        self.body = body
        self.content = content
    }
}
