import CouchetteCore

// MARK: - ReplicatedRevision

/// One revision on its way between two peers: its body, its history and the attachments the receiver lacks.
struct ReplicatedRevision: Sendable {
    /// The document ID.
    var documentID: String
    /// The revision ID.
    var revisionID: String
    /// Its ancestry, newest first, starting with ``revisionID``.
    var history: [String]
    /// Whether it is a tombstone.
    var isDeleted: Bool
    /// The body without `_id`, `_rev` and `_revisions`; `_attachments` holds stubs.
    var body: [String: JSONValue]
    /// The content of the attachments the receiver lacks, by name; the other stubs name content it holds.
    var attachments: [String: Blob]
    /// Where pulled content waits (in files) until stored; removed once the revision is gone.
    var temporaryFiles: TemporaryFiles? = nil

    /// Whether the source sent a stub saying the reader lost access to the document (`_removed: true`, Sync
    /// Gateway's answer for a revision outside the user's channels, or a `revoked` change): never stored as a
    /// revision.
    var isAccessRemoval: Bool { body["_removed"] == true }

    /// The stand-in for a `revoked` change: an access removal of `revisionID`.
    static func accessRemoval(of documentID: String, revisionID: String) -> ReplicatedRevision {
        ReplicatedRevision(
            documentID: documentID, revisionID: revisionID, history: [revisionID], isDeleted: false,
            body: ["_removed": true], attachments: [:])
    }

    /// The generation of ``revisionID``.
    var generation: Int { Self.generation(of: revisionID) ?? history.count }

    /// The generation of a revision ID (`3-abc` → 3), nil when malformed.
    static func generation(of revisionID: String) -> Int? {
        revisionID.split(separator: "-", maxSplits: 1).first.flatMap { Int($0) }
    }

    /// The digest `_attachments` gives for attachment `name`, nil when absent or malformed.
    func digest(ofAttachment name: String) -> AttachmentDigest? {
        body["_attachments"]?[name]?["digest"]?.stringValue.flatMap { try? AttachmentDigest(parsing: $0) }
    }

    /// The names of the attachments whose content must be sent to a peer holding `knownAncestors`: those changed
    /// after the newest of them in this revision's history (an attachment's `revpos` is the generation that last
    /// set it, so older ones are in that ancestor too).
    func attachmentsToSend(knownAncestors: [String]) -> [String] {
        let known = Set(knownAncestors)
        let newestKnown = history.first(where: known.contains).flatMap(Self.generation(of:)) ?? 0
        return (body["_attachments"]?.objectValue ?? [:]).compactMap { name, metadata in
            guard let revpos = metadata["revpos"]?.intValue, revpos <= newestKnown else { return name }
            return nil
        }
    }
}

/// A revision a target lacks, with the revisions it holds that may be its ancestors (`possible_ancestors` of
/// `_revs_diff`, sent back as `atts_since`).
struct WantedRevision: Sendable {
    var documentID: String
    var revisionID: String
    var knownAncestors: [String] = []

    /// The known ancestors of each document of `wanted` (the same for all its revisions: one `_revs_diff` entry).
    static func knownAncestors(of wanted: [WantedRevision]) -> [String: [String]] {
        Dictionary(wanted.map { ($0.documentID, $0.knownAncestors) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A peer's `_revs_diff` answer for one document.
struct MissingRevisions: Sendable, Equatable {
    /// The revisions it lacks.
    var missing: [String]
    /// Revisions it holds that may be ancestors of the missing ones.
    var possibleAncestors: [String] = []
}

/// A peer's answer for one revision it was given to store.
struct ReplicationWriteResult: Sendable {
    var documentID: String
    var revisionID: String
    var isDeleted = false
    /// Whether it told of lost access (``ReplicatedRevision/isAccessRemoval``) rather than bringing a revision.
    var isAccessRemoval = false
    /// Why it was refused (403 from a sync function, 400…), nil when stored.
    var error: CouchetteError?
}

/// One document in a batch of changes: its changed leaf revisions.
struct ReplicationChange: Sendable {
    var documentID: String
    var revisionIDs: [String]
    var isDeleted: Bool
    /// The source says the user lost access to the document (a `revoked` entry): nothing to fetch.
    var isRevoked = false
    /// The document's sequence at the source, when the source tells it (a local collection does).
    var sequence: UInt64? = nil
}

/// A batch of a peer's changes and the sequence to resume after it (opaque outside the peer).
struct ReplicationChanges: Sendable {
    var changes: [ReplicationChange]
    var lastSequence: String?
    /// The source's handle on this batch, given back with the revisions wanted of it (a BLIP source answers that
    /// `changes` message); nil when the source needs none.
    var handle: Int? = nil
}
