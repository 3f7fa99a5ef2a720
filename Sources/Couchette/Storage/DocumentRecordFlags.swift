/// Bits stored with each document row.
struct DocumentRecordFlags: OptionSet, Sendable, Hashable {
    let rawValue: Int64

    /// The winning revision is a tombstone.
    static let deleted = DocumentRecordFlags(rawValue: 1)
    /// Two or more leaves are live.
    static let conflicted = DocumentRecordFlags(rawValue: 2)
    /// The current revision has attachments or blobs.
    static let hasAttachments = DocumentRecordFlags(rawValue: 4)
}
