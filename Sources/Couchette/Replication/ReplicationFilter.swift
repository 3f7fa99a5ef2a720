// MARK: - Replication filters

/// What a replication filter is told about a document besides its body.
public struct DocumentFlags: OptionSet, Sendable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The revision is a deletion (its document has no properties).
    public static let deleted = DocumentFlags(rawValue: 1)
    /// The user lost access to the document (a removal from all their channels).
    public static let accessRemoved = DocumentFlags(rawValue: 2)

    /// The flags of a replicated revision.
    init(deleted: Bool, accessRemoved: Bool) {
        self = []
        if deleted { insert(.deleted) }
        if accessRemoved { insert(.accessRemoved) }
    }
}

/// Decides whether a revision is pushed (``CollectionConfiguration/pushFilter``) or pulled
/// (``CollectionConfiguration/pullFilter``); documents it refuses are skipped, not retried.
///
/// ```swift
/// lists.pushFilter = { document, flags in flags.contains(.deleted) || document.string(forKey: "type") == "task-list" }
/// ```
public typealias ReplicationFilter = @Sendable (Document, DocumentFlags) -> Bool
