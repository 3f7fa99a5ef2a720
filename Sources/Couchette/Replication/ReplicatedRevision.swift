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
    /// The content of attachments, by name.
    var attachments: [String: Blob]
}

/// A peer's answer for one revision it was given to store.
struct ReplicationWriteResult: Sendable {
    var documentID: String
    var revisionID: String
    var isDeleted = false
    /// Why it was refused (403 from a sync function, 400…), nil when stored.
    var error: CouchetteError?
}

/// One document in a batch of changes: its changed leaf revisions.
struct ReplicationChange: Sendable {
    var documentID: String
    var revisionIDs: [String]
    var isDeleted: Bool
}

/// A batch of a peer's changes and the sequence to resume after it (opaque outside the peer).
struct ReplicationChanges: Sendable {
    var changes: [ReplicationChange]
    var lastSequence: String?
}
