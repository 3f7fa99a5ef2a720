import CouchetteCore
import Foundation

// MARK: - EncodedWrite

/// A document write worked out and encoded before the storage's lock: its index rows, its winner's body and its
/// metadata, computed against the document as read beforehand (``previousSequence``). Under the lock
/// ``GatewayStorage/store(_:)`` then only checks that the document did not change meanwhile and writes the rows —
/// the part concurrent writes have to take one at a time shrinks to what the database itself does.
///
/// The write's sequence is not known before the lock: rows and grants it makes carry ``pendingSequence`` until
/// then, and the metadata writes a sequence equal to the document's own as `null` (read back as the document's
/// sequence), so its bytes do not depend on it.
public struct EncodedWrite: Sendable {
    /// The placeholder for the sequence the write will be stored at.
    static let pendingSequence = UInt64.max

    /// The document as edited, its channel removals and grant sequences not yet recorded: what a storage that
    /// stores through ``GatewayStorage/update(documentID:_:)`` takes.
    public let document: StoredDocument
    /// The sequence of the document the write was computed on; nil when it was absent.
    public let previousSequence: UInt64?
    /// The attachment bodies the write brings, stored with it.
    let attachments: [[UInt8]]
    /// The index rows to write, new ones at ``pendingSequence``.
    let changes: IndexChanges
    /// The winning revision's body as stored.
    let winnerBody: [UInt8]
    /// The metadata as stored (``StoredDocumentCodec/encodeMetadata(_:)``).
    let metadata: [UInt8]
    /// Whether the winning revision is a deletion.
    let isDeleted: Bool
    /// The winning revision's ID.
    let revision: String

    /// Works out a write of `document` over `previous`.
    ///
    /// - Parameters:
    ///   - document: The document to store (it must have a winning revision).
    ///   - previous: The document as read before the edit; nil when it was absent.
    ///   - attachments: Attachment bodies the write brings.
    init(document: StoredDocument, previous: StoredDocument?, attachments: [[UInt8]]) {
        self.document = document
        self.previousSequence = previous?.sequence
        self.attachments = attachments
        var recorded = document
        recorded.sequence = Self.pendingSequence
        var changes = IndexChanges()
        changes.recordUpdate(of: &recorded, previous: previous)
        self.changes = changes
        let winner = recorded.winner
        winnerBody = (winner?.body ?? .object([:])).serialized()
        metadata = StoredDocumentCodec.encodeMetadata(recorded)
        isDeleted = winner?.isDeleted ?? false
        revision = winner?.id.description ?? ""
    }
}
