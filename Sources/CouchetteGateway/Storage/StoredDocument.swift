import CouchetteCore
import Foundation

/// A document as the gateway stores it: its revision tree (leaf bodies kept), the channels each revision
/// was routed to, the access the current revision grants, and the sequence of its last change.
///
/// Mirrors Sync Gateway's `_sync` metadata (gateway-rest-api.md §16, `_raw`), without Couchbase Server's
/// CAS: the storage's atomic ``GatewayStorage/update(documentID:_:)`` plays that role.
public struct StoredDocument: Sendable, Hashable {
    /// The document's ID.
    public var id: String
    /// Every revision kept, with bodies for leaves (and, briefly, the current revision's parent).
    public var tree: RevisionTree
    /// The channels each revision was assigned to; revisions without an entry were in none.
    public var channels: [RevisionID: Set<String>]
    /// Channels granted by the current revision, by user (`access()` in the sync function).
    public var access: [String: Set<String>]
    /// Roles granted by the current revision, by user (`role()` in the sync function).
    public var roleAccess: [String: Set<String>]
    /// When the document expires, if it does.
    public var expiry: Date?
    /// The sequence of the last change; 0 until stored.
    public var sequence: UInt64
    /// The channels the document has left, each with the sequence of the change that took it out (Sync Gateway's
    /// removed `_sync.channels` entries). Kept by the storage: a channel the document enters again leaves the map.
    public var channelRemovals: [String: UInt64]
    /// The sequence of the change that first made each of ``grants`` (Sync Gateway's `_sync.access` sequences):
    /// a grant a new revision repeats keeps its sequence. Kept by the storage.
    public var grantSequences: [DocumentGrant: UInt64]
    /// The current revision's body as stored, when the document was read for sending
    /// (``GatewayStorage/documents(ids:winnerAsText:)``): that revision then has no body in the tree until
    /// ``parsingWinnerText()`` reads it. Nil otherwise. Such a document is for reading only: storages refuse to
    /// write it (its tree lacks a body).
    public var winnerText: BodyText?

    /// A revision's body as stored, unparsed.
    public struct BodyText: Sendable, Hashable {
        /// The revision whose body it is.
        public var revision: RevisionID
        /// The JSON text of an object.
        public var bytes: [UInt8]
    }

    /// A document with no revision yet.
    public init(id: String) {
        self.id = id
        self.tree = RevisionTree()
        self.channels = [:]
        self.access = [:]
        self.roleAccess = [:]
        self.expiry = nil
        self.sequence = 0
        self.channelRemovals = [:]
        self.grantSequences = [:]
        self.winnerText = nil
    }

    /// The document with ``winnerText`` parsed into the tree's winner, as ``GatewayStorage/document(id:)`` reads it.
    ///
    /// - Throws: 500 when the text is no JSON.
    public func parsingWinnerText() throws(GatewayError) -> StoredDocument {
        guard let text = winnerText else { return self }
        var document = self
        do {
            document.tree.setBody(try JSONValue(parsing: text.bytes), of: text.revision)
        } catch {
            throw .internalError("A stored document is corrupt: \(id)")
        }
        document.winnerText = nil
        return document
    }

    /// The current (winning) revision.
    public var winner: RevisionTree.Node? { tree.winner }

    /// Whether the current revision is a tombstone.
    public var isDeleted: Bool { tree.isDeleted }

    /// The channels of the current revision.
    public var currentChannels: Set<String> {
        winner.flatMap { channels[$0.id] } ?? []
    }

    /// The grants the current revision makes: ``access`` and ``roleAccess`` as one set.
    public var grants: Set<DocumentGrant> {
        var grants: Set<DocumentGrant> = []
        forEachGrant { grants.insert($0) }
        return grants
    }

    /// Calls `body` with each grant the current revision makes (each once: ``access`` and ``roleAccess`` hold sets).
    public func forEachGrant(_ body: (DocumentGrant) throws -> Void) rethrows {
        for (principal, channels) in access {
            for channel in channels { try body(DocumentGrant(kind: .channel, principal: principal, target: channel)) }
        }
        for (user, roles) in roleAccess {
            for role in roles { try body(DocumentGrant(kind: .role, principal: user, target: role)) }
        }
    }

    /// Whether the current revision makes `grant`.
    public func makes(_ grant: DocumentGrant) -> Bool {
        switch grant.kind {
        case .channel: access[grant.principal]?.contains(grant.target) ?? false
        case .role: roleAccess[grant.principal]?.contains(grant.target) ?? false
        }
    }
}
