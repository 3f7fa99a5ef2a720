import CouchetteCore

// MARK: - PreparedWrite

/// What an edit of a document produces: the new stored document (nil for no change), the revision written, and the
/// attachment bodies it brings, by digest, stored with the document when it commits.
struct DocumentEditResult: Sendable {
    var document: StoredDocument?
    var revision: RevisionID
    var attachments: [String: [UInt8]] = [:]
}

/// An edit of a stored document: gets the current document (nil if absent) and returns its result. It has no
/// effects (it may run twice: on a snapshot, then again at commit on the latest document).
typealias DocumentEdit = @Sendable (StoredDocument?) throws(GatewayError) -> DocumentEditResult

/// A document write computed on a snapshot, outside the storage's lock, waiting for ``DocumentStore/commit(_:)``:
/// committed as is when the document did not change meanwhile, else its edit runs again under the lock.
struct PreparedWrite: Sendable {
    /// The document ID.
    let id: String
    /// The sequence of the snapshot the edit saw; nil when the document was absent.
    let snapshotSequence: UInt64?
    /// The edit's result on the snapshot.
    let result: DocumentEditResult
    /// The edit, to run again on the latest document.
    let edit: DocumentEdit
}
