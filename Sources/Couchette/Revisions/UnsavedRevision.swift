import Foundation

/// A child revision that has not been saved yet (Couchbase Lite 1.x `CBLUnsavedRevision`). Not `Sendable`:
/// edit it on one thread, then save it.
///
/// ```swift
/// let edit = try lists.currentRevision(documentID: id)!.createRevision()
/// edit["name"] = "Shopping"
/// edit.setAttachment(named: "image", contentType: "image/jpeg", content: jpeg)
/// let saved = try edit.save()
/// ```
public final class UnsavedRevision: Revision {
    /// The collection holding the document.
    public let collection: Collection
    public let documentID: String
    private let parent: SavedRevision?
    /// The body to save, including `_attachments` (entries may be ``Blob``s).
    public var properties: [String: Any]?

    init(collection: Collection, documentID: String, parent: SavedRevision?, properties: [String: Any]) {
        self.collection = collection
        self.documentID = documentID
        self.parent = parent
        self.properties = properties
    }

    public var revisionID: String? { nil }
    public var parentRevisionID: String? { parent?.revisionID }
    public var isGone: Bool { isDeletion }

    /// Whether saving deletes the document.
    public var isDeletion: Bool {
        get { (properties?["_deleted"] as? Bool) ?? false }
        set { properties = (properties ?? [:]).merging(["_deleted": newValue]) { _, new in new } }
    }

    /// The body without `_` keys; setting it keeps `_id`, `_rev`, `_deleted` and `_attachments`.
    public var userProperties: [String: Any]? {
        get { properties?.filter { !$0.key.hasPrefix("_") } }
        set {
            let special = (properties ?? [:]).filter { $0.key.hasPrefix("_") }
            properties = (newValue ?? [:]).merging(special) { _, special in special }
        }
    }

    /// A property by key; setting nil removes it.
    public subscript(key: String) -> Any? {
        get { properties?[key] }
        set {
            var updated = properties ?? [:]
            updated[key] = newValue
            properties = updated
        }
    }

    /// Adds or replaces an attachment; nil content removes it.
    public func setAttachment(named name: String, contentType: String, content: Data?) {
        var attachments = properties?["_attachments"] as? [String: Any] ?? [:]
        attachments[name] = content.map { Blob(contentType: contentType, data: $0) }
        properties = (properties ?? [:]).merging(["_attachments": attachments]) { _, new in new }
    }

    /// Adds or replaces an attachment read from a file.
    ///
    /// - Throws: `.notFound` / `.badInput` when the file cannot be read.
    public func setAttachment(named name: String, contentType: String, contentURL: URL) throws {
        var attachments = properties?["_attachments"] as? [String: Any] ?? [:]
        attachments[name] = try Blob(contentType: contentType, fileURL: contentURL)
        properties = (properties ?? [:]).merging(["_attachments": attachments]) { _, new in new }
    }

    /// Removes an attachment.
    public func removeAttachment(named name: String) {
        var attachments = properties?["_attachments"] as? [String: Any] ?? [:]
        attachments[name] = nil
        properties = (properties ?? [:]).merging(["_attachments": attachments]) { _, new in new }
    }

    public func attachment(named name: String) -> Blob? {
        guard let entry = (properties?["_attachments"] as? [String: Any])?[name] else { return nil }
        if let blob = entry as? Blob { return blob }
        return parent?.attachment(named: name)
    }

    /// Saves the revision.
    ///
    /// - Throws: `.conflict` (409) unless the parent is still the document's current revision.
    public func save() throws -> SavedRevision {
        try collection.saveRevision(
            properties ?? [:], documentID: documentID, parentRevisionID: parent?.revisionID, isDeletion: isDeletion,
            requireCurrent: true)
    }

    /// Saves the revision even when the parent is not current, adding a branch (a conflict).
    public func saveAllowingConflict() throws -> SavedRevision {
        try collection.saveRevision(
            properties ?? [:], documentID: documentID, parentRevisionID: parent?.revisionID, isDeletion: isDeletion,
            allowConflict: true)
    }
}
