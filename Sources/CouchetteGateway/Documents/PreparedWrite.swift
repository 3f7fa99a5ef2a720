import CouchetteCore

// MARK: - PreparedWrite

/// What an edit of a document produces: the new stored document (nil for no change), the revision written, and the
/// attachment bodies it brings, by digest, stored with the document when it commits.
struct DocumentEditResult: Sendable {
    var document: StoredDocument?
    var revision: RevisionID
    var attachments: [String: [UInt8]] = [:]
    /// The revision's body as ``CouchetteCore/JSONValue/serialized(prettyPrinted:)`` writes it, when the edit made
    /// that text already (for its digest): stored as it is if the revision wins.
    var serializedBody: [UInt8]?
}

/// An edit of a stored document: gets the current document (nil if absent) and returns its result. It has no
/// effects (it may run twice: on a snapshot, then again at commit on the latest document).
typealias DocumentEdit = @Sendable (StoredDocument?, any GatewayStorage) throws(GatewayError) -> DocumentEditResult

/// A new revision added to a document's tree, its attachments resolved, before the sync function routed it
/// (``DocumentStore/finish(_:routing:)`` completes it).
struct UnroutedRevision: Sendable {
    /// The document with the revision in its tree.
    var document: StoredDocument
    /// The revision added.
    let revision: RevisionID
    /// The attachment bodies the revision brings, by digest.
    let attachments: [String: [UInt8]]
    /// The document's winning revision before the edit.
    let previousWinner: RevisionID?
    /// The revision's body serialized, when the edit made that text already.
    var serializedBody: [UInt8]? = nil
}

/// What an edit does to a document before routing.
enum UnroutedEditResult: Sendable {
    /// The revision exists already (`new_edits=false`): nothing to store.
    case unchanged(RevisionID)
    /// A revision was added.
    case added(UnroutedRevision)
}

/// An edit of a stored document before routing: gets the current document (nil if absent) and adds its revision.
/// Like ``DocumentEdit``, it has no effects.
typealias UnroutedEdit = @Sendable (StoredDocument?, any GatewayStorage) throws(GatewayError) -> UnroutedEditResult

/// A document write computed on a snapshot, outside the storage's lock, waiting for ``DocumentStore/commit(_:)``:
/// committed as is when the document did not change meanwhile, else its edit runs again under the lock.
struct PreparedWrite: Sendable {
    /// The document ID.
    let id: String
    /// The edit's result on the snapshot.
    let result: DocumentEditResult
    /// The edit, to run again on the latest document.
    let edit: DocumentEdit
    /// The result's document prepared for storage against the snapshot (``GatewayStorage/store(_:)``), outside the
    /// storage's lock; nil when the edit changes nothing.
    let encoded: EncodedWrite?

    /// - Parameter encodingRows: Whether to work out the write's rows now (``GatewayStorage/encodesWritesAhead``).
    init(
        id: String, snapshot: StoredDocument?, result: DocumentEditResult, edit: @escaping DocumentEdit,
        encodingRows: Bool
    ) {
        self.id = id
        self.result = result
        self.edit = edit
        self.encoded = result.document.map { document in
            EncodedWrite(
                document: document, previous: snapshot, attachments: Array(result.attachments.values),
                encodingRows: encodingRows, serializedBody: result.serializedBody.map { (result.revision, $0) })
        }
    }
}
