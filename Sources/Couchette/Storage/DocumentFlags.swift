/// Bits stored with each document row.
struct DocumentFlags: OptionSet, Sendable, Hashable {
    let rawValue: Int64

    /// The winning revision is a tombstone.
    static let deleted = DocumentFlags(rawValue: 1)
    /// Two or more leaves are live.
    static let conflicted = DocumentFlags(rawValue: 2)
    /// The current revision has attachments or blobs.
    static let hasAttachments = DocumentFlags(rawValue: 4)
}
