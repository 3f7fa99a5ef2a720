import CouchetteCore

/// One document's entry in a changes feed: its latest change the reader may see.
public struct ChangeEntry: Sendable, Hashable {
    /// The sequence of that change.
    public var sequence: UInt64
    /// The document's ID.
    public var documentID: String
    /// The current revision.
    public var revisionID: RevisionID
    /// Whether the current revision is a tombstone.
    public var isDeleted: Bool
    /// Channels the document left with this change (the reader lost access through them), when the feed
    /// is filtered by channels and the document is in none of them any more.
    public var removedFrom: Set<String>

    public init(
        sequence: UInt64, documentID: String, revisionID: RevisionID, isDeleted: Bool, removedFrom: Set<String> = []
    ) {
        self.sequence = sequence
        self.documentID = documentID
        self.revisionID = revisionID
        self.isDeleted = isDeleted
        self.removedFrom = removedFrom
    }
}
