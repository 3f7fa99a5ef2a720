/// The document with a given ID, looked up with `collection["id"]` (Couchbase Lite 3 `DocumentFragment`).
///
/// ```swift
/// if lists["user1.123"].exists { print(lists["user1.123"]["name"].string ?? "") }
/// ```
public final class DocumentFragment: DictionaryFragment, Sendable {
    /// The document, or nil when it does not exist or is deleted.
    public let document: Document?

    init(document: Document?) {
        self.document = document
    }

    /// Whether the document exists (and is not deleted).
    public var exists: Bool { document != nil }

    /// The fragment for a key of the document (missing when the document is).
    public subscript(key: String) -> Fragment {
        document?[key] ?? Fragment(.missing)
    }
}
