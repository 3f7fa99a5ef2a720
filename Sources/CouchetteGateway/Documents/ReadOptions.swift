import CouchetteCore

// MARK: - ReadOptions

/// What a document read includes besides the body (spec: gateway-rest-api.md §5.1, §9).
///
/// ```swift
/// // GET /db/doc?revs=true&attachments=true&atts_since=["2-b"]
/// let options = ReadOptions(
///     includeRevisions: true, includeAttachments: true, attachmentsSince: [try RevisionID(parsing: "2-b")])
/// let revision = try store.revision(id: "doc", as: caller, options: options)
/// ```
public struct ReadOptions: Sendable, Hashable {
    /// Add `_revisions` (`revs=true`).
    public var includeRevisions: Bool
    /// Cap `_revisions` at this many IDs (`revs_limit`).
    public var revisionsLimit: Int?
    /// Stop `_revisions` at the first of these (`revs_from`, or `atts_since` for the history).
    public var revisionsFrom: Set<RevisionID>?
    /// Add `_revs_info` (`revs_info=true`).
    public var includeRevisionsInfo: Bool
    /// Include attachment bodies (`attachments=true`); otherwise attachments are stubs.
    public var includeAttachments: Bool
    /// With ``includeAttachments``, the revisions the reader already has (`atts_since`): attachments whose `revpos`
    /// is at most the generation of the newest of these in the revision's history stay stubs
    /// (replication-protocol.md §7.3).
    public var attachmentsSince: Set<RevisionID>?
    /// Add `_exp` (RFC 3339) when the document expires (`show_exp=true`).
    public var includeExpiry: Bool
    /// Add `_conflicts`, the live losing leaves, when reading the winner (`conflicts=true`).
    public var includeConflicts = false
    /// Add `_deleted_conflicts`, the deleted losing leaves, when reading the winner (`deleted_conflicts=true`).
    public var includeDeletedConflicts = false
    /// Add `_local_seq`, the document's sequence (`local_seq=true`).
    public var includeLocalSequence = false

    /// Creates options; by default the body only.
    public init(
        includeRevisions: Bool = false, revisionsLimit: Int? = nil, revisionsFrom: Set<RevisionID>? = nil,
        includeRevisionsInfo: Bool = false, includeAttachments: Bool = false,
        attachmentsSince: Set<RevisionID>? = nil, includeExpiry: Bool = false
    ) {
        self.includeRevisions = includeRevisions
        self.revisionsLimit = revisionsLimit
        self.revisionsFrom = revisionsFrom
        self.includeRevisionsInfo = includeRevisionsInfo
        self.includeAttachments = includeAttachments
        self.attachmentsSince = attachmentsSince
        self.includeExpiry = includeExpiry
    }
}
