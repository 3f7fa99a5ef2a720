import CouchetteCore

// MARK: - BulkGetItem

/// One entry of a `_bulk_get` request's `docs` (spec: gateway-rest-api.md §9):
/// `{"id", "rev"?, "atts_since"?: [...], "revs_from"?: [...]}`.
///
/// ```swift
/// let item = BulkGetItem(json: ["id": "doc", "rev": "2-b", "atts_since": ["1-a"]])
/// item.isValid                   // true
/// item.options(base).attachmentsSince   // ["1-a"] when base includes attachments
/// ```
struct BulkGetItem: Sendable, Hashable {
    /// The document ID, when the entry has a string `id`.
    let id: String?
    /// The `rev` as sent, when it is a string.
    let revisionText: String?
    /// The parsed `rev`; nil for the current revision.
    let revision: RevisionID?
    /// The parsed `atts_since` (unparseable entries skipped).
    let attachmentsSince: Set<RevisionID>?
    /// The parsed `revs_from` (unparseable entries skipped).
    let revisionsFrom: Set<RevisionID>?
    /// Whether `id` is a non-empty string and `rev`, when present, a valid revision ID.
    let isValid: Bool

    /// Reads one entry.
    init(json: JSONValue) {
        id = json["id"]?.stringValue
        let rev = json["rev"]
        revisionText = rev?.stringValue
        revision = revisionText.flatMap { try? RevisionID(parsing: $0) }
        attachmentsSince = Self.revisions(json["atts_since"])
        revisionsFrom = Self.revisions(json["revs_from"])
        let revisionIsValid = rev == nil || rev == .null || revision != nil
        isValid = !(id ?? "").isEmpty && revisionIsValid
    }

    /// The request's read options with this entry's `atts_since` (used only when attachments are included) and
    /// `revs_from` (default: `atts_since`).
    func options(_ base: ReadOptions) -> ReadOptions {
        var options = base
        if let attachmentsSince, base.includeAttachments { options.attachmentsSince = attachmentsSince }
        if let from = revisionsFrom ?? attachmentsSince { options.revisionsFrom = from }
        return options
    }

    private static func revisions(_ json: JSONValue?) -> Set<RevisionID>? {
        guard let items = json?.arrayValue else { return nil }
        return Set(items.compactMap { $0.stringValue.flatMap { try? RevisionID(parsing: $0) } })
    }
}
