import CouchetteCore
import Foundation

/// One stored document: the current revision's body and metadata, and (when loaded) the whole revision tree.
struct DocumentRecord: Sendable {
    var collectionID: Int64
    var documentID: String
    var sequence: UInt64
    var flags: DocumentRecordFlags
    var revisionID: String
    /// The current (winning) revision's JSON.
    var body: [UInt8]
    /// The revision tree, when it was loaded; its winner carries `body`.
    var tree: CouchetteCore.RevisionTree?
    /// Seconds since 1970 when the document expires.
    var expiration: Double?
    /// Seconds since 1970 when a save or a replicated revision last wrote the row; nil for rows older than that.
    var modified: Double?
    /// The serialized bodies of tree nodes that were not parsed (a tree read for a save), by revision.
    var treeBodies: [RevisionID: [UInt8]] = [:]
    /// The stored revision tree as read, when it was read without decoding (see
    /// ``DatabaseStorage/document(collectionID:id:withTree:parseWinnerBody:decodeTree:)``).
    var encodedTree: [UInt8]?

    var isDeleted: Bool { flags.contains(.deleted) }

    /// ``modified`` as a date.
    var timestamp: Date? { modified.map(Date.init(timeIntervalSince1970:)) }
}
