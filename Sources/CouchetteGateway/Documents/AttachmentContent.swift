import CouchetteCore

// MARK: - AttachmentContent

/// One attachment of one revision, with its bytes: what `GET /{db}/{doc}/{attachment}` serves
/// (spec: gateway-rest-api.md §6).
///
/// ```swift
/// let content = try store.attachment(named: "photo.jpg", documentID: "doc", as: caller)
/// content.metadata.contentType   // "image/jpeg"
/// content.data.count             // content.metadata.length
/// ```
public struct AttachmentContent: Sendable, Hashable {
    /// The attachment's name in `_attachments`.
    public var name: String
    /// Its metadata: content type, digest, length, `revpos`.
    public var metadata: AttachmentMetadata
    /// The stored bytes.
    public var data: [UInt8]
    /// The revision it was read from.
    public var revision: RevisionID

    /// Creates an attachment value.
    public init(name: String, metadata: AttachmentMetadata, data: [UInt8], revision: RevisionID) {
        self.name = name
        self.metadata = metadata
        self.data = data
        self.revision = revision
    }
}
