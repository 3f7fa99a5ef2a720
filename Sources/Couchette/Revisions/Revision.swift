import CouchetteCore
import Foundation

/// Read API of stored and pending revisions (Couchbase Lite 1.x `CBLRevision`).
public protocol Revision {
    /// The document's ID.
    var documentID: String { get }
    /// The revision's ID; nil for an unsaved revision.
    var revisionID: String? { get }
    /// The parent revision's ID; nil for a first revision.
    var parentRevisionID: String? { get }
    /// Whether the revision deletes the document.
    var isDeletion: Bool { get }
    /// A tombstone, or a revision removed from the reader's channels (`_removed`).
    var isGone: Bool { get }
    /// The body with `_id`, `_rev`, `_deleted` and `_attachments`; nil when the body is not available.
    var properties: [String: Any]? { get }
    /// The body without any key starting with `_`.
    var userProperties: [String: Any]? { get }
    /// A property by key.
    subscript(key: String) -> Any? { get }
    /// The names of the revision's attachments.
    var attachmentNames: [String] { get }
    /// An attachment by name.
    func attachment(named name: String) -> Blob?
}

extension Revision {
    public subscript(key: String) -> Any? { properties?[key] }

    public var userProperties: [String: Any]? {
        properties?.filter { !$0.key.hasPrefix("_") }
    }

    public var attachmentNames: [String] {
        ((properties?["_attachments"] as? [String: Any])?.keys).map { Array($0).sorted() } ?? []
    }
}

/// Builds the 1.x `properties` dictionary of a revision from its stored body.
enum RevisionProperties {
    static func properties(documentID: String, revisionID: String?, deleted: Bool, body: JSONValue) -> [String: Any] {
        var properties = (body.objectValue ?? [:]).mapValues(DocumentValues.value(from:))
        properties["_id"] = documentID
        if let revisionID { properties["_rev"] = revisionID }
        if deleted { properties["_deleted"] = true }
        return properties
    }
}
