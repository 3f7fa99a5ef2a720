import CouchetteCore

// MARK: - OpenRevision

/// One result of an `open_revs` read (spec: gateway-rest-api.md §5.1): a revision, possibly redacted, or a
/// revision the document does not have.
///
/// ```swift
/// for result in try store.openRevisionResults(id: "doc", revisions: nil, as: caller) {
///     switch result {
///     case .found(let revision): print(revision.revisionID ?? "")
///     case .missing(let revision): print("missing", revision)
///     }
/// }
/// ```
public enum OpenRevision: Sendable, Hashable {
    /// The revision, redacted (`_removed: true`) outside the caller's channels.
    case found(DocumentRevision)
    /// The document has no such revision, or its body is gone.
    case missing(RevisionID)

    /// The JSON form: `{"ok": body}` (attachment bodies inline) or `{"missing": rev}`.
    public var json: JSONValue {
        switch self {
        case .found(let revision): ["ok": revision.json]
        case .missing(let revision): ["missing": .string(revision.description)]
        }
    }
}
