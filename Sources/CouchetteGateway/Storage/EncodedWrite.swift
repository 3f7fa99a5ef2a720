import CouchetteCore
import Foundation

// MARK: - EncodedWrite

/// A document write prepared before the storage's lock: the document, the sequence of the one it was computed on,
/// the attachments it brings and — for a storage that takes them (``GatewayStorage/encodesWritesAhead``) — its
/// ``Rows``: index rows, winner's body and metadata, worked out against that document. Under the lock
/// ``GatewayStorage/store(_:)`` then only checks that the document did not change meanwhile and writes the rows, so
/// the part concurrent writes take one at a time shrinks to what the database itself does.
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
    /// The rows, worked out ahead; nil when the storage works them out under its own lock.
    let rows: Rows?

    /// Prepares a write of `document` over `previous`.
    ///
    /// - Parameters:
    ///   - document: The document to store (it must have a winning revision).
    ///   - previous: The document as read before the edit; nil when it was absent.
    ///   - attachments: Attachment bodies the write brings.
    ///   - encodingRows: Whether to work out the ``Rows`` now (``GatewayStorage/encodesWritesAhead``).
    ///   - serializedBody: A revision's body as serialized already, used if that revision wins.
    init(
        document: StoredDocument, previous: StoredDocument?, attachments: [[UInt8]], encodingRows: Bool,
        serializedBody: (revision: RevisionID, bytes: [UInt8])? = nil
    ) {
        self.document = document
        self.previousSequence = previous?.sequence
        self.attachments = attachments
        self.rows = encodingRows ? Rows(document: document, previous: previous, serializedBody: serializedBody) : nil
    }

    /// What a write stores: its index rows (new ones at ``pendingSequence``), its winner's body and its metadata.
    struct Rows: Sendable {
        /// The index rows to write.
        let changes: IndexChanges
        /// The winning revision's body as stored.
        let winnerBody: [UInt8]
        /// The metadata as stored (``StoredDocumentCodec/encodeMetadata(_:)``).
        let metadata: [UInt8]
        /// Whether the winning revision is a deletion.
        let isDeleted: Bool
        /// The winning revision's ID.
        let revision: String
        /// When the document expires.
        let expiry: Date?
        /// The document with its channel removals and grant sequences recorded, at ``pendingSequence``.
        private let recorded: StoredDocument

        /// Works out the rows of a write of `document` over `previous` (the document as stored before); the
        /// winner's body is `serializedBody`'s bytes when it is that revision.
        init(
            document: StoredDocument, previous: StoredDocument?,
            serializedBody: (revision: RevisionID, bytes: [UInt8])? = nil
        ) {
            var recorded = document
            recorded.sequence = EncodedWrite.pendingSequence
            var changes = IndexChanges()
            changes.recordUpdate(of: &recorded, previous: previous)
            self.changes = changes
            let winner = recorded.winner
            if let serializedBody, let winner, winner.id == serializedBody.revision {
                winnerBody = serializedBody.bytes
            } else {
                winnerBody = (winner?.body ?? .object([:])).serialized()
            }
            metadata = StoredDocumentCodec.encodeMetadata(recorded)
            isDeleted = winner?.isDeleted ?? false
            revision = winner?.id.description ?? ""
            expiry = recorded.expiry
            self.recorded = recorded
        }

        /// The document as stored at `sequence`: the pending sequence replaced by it.
        func document(storedAt sequence: UInt64) -> StoredDocument {
            var stored = recorded
            let pending = EncodedWrite.pendingSequence
            stored.sequence = sequence
            stored.grantSequences = stored.grantSequences.mapValues { $0 == pending ? sequence : $0 }
            stored.channelRemovals = stored.channelRemovals.mapValues { $0 == pending ? sequence : $0 }
            return stored
        }
    }
}
