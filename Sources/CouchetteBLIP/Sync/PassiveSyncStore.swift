import CouchetteCore

// MARK: - PassiveSyncStore

/// What a database must answer for a ``PassiveSyncSession`` to serve it over BLIP (spec: blip-sync-protocol.md §3):
/// checkpoints, a feed of changes for a subscription, the answers to a pusher's offers, and the revisions it pushes.
/// The gateway's per-user database and a Lite listener's collection each conform; the session holds the protocol.
///
/// Errors thrown by the methods become `ERR HTTP/<status>` replies through ``failure(of:)``; ``BLIPError``'s
/// `refused` carries its own status.
public protocol PassiveSyncStore: Sendable {
    /// The HTTP status and reason of an error the store threw.
    func failure(of error: any Error) -> (status: Int, reason: String)

    /// Whether a request beginning a unit of work (a subscription, an offer, a checkpoint) may go on: the gateway
    /// refuses it (401) once the user's password changed or the user was deleted or disabled.
    func admitsWork() -> Bool

    /// Where the session's request handlers and feeds run: the threads of a store whose calls block for long (a
    /// database over the network), so that they never hold Swift's cooperative threads; nil for those.
    var executor: (any TaskExecutor)? { get }

    // MARK: Checkpoints

    /// The checkpoint kept for `client`, with its revision; nil when there is none.
    func checkpoint(client: String) async throws -> (revision: String, body: [String: JSONValue])?

    /// Stores `body` as `client`'s checkpoint when `revision` names the stored one (nil: none stored); returns the new
    /// revision.
    ///
    /// - Throws: An error of status 409 when `revision` is not the stored one.
    func saveCheckpoint(_ body: [String: JSONValue], client: String, replacing revision: String?) async throws -> String

    // MARK: Serving a pull

    /// The feed of changes for `subscription` (refusing a filter or versioning the store does not serve).
    func subscribe(_ subscription: SubChangesRequest, subprotocol: String) async throws -> any SyncChangeSource

    /// The bytes of a stored attachment (served while a revision naming it awaits its answer); nil when absent.
    func attachmentContent(digest: String) async throws -> [UInt8]?

    // MARK: Taking a push

    /// Whether the pusher may send revisions as deltas (said in replies to its offers, §4.1).
    var acceptsDeltas: Bool { get }

    /// The answers to a pusher's `changes` (nil entries were malformed: answer `.have`).
    func revsDiff(_ entries: [OfferedChange?]) async throws -> [RevsDiffAnswer]

    /// The answers to a pusher's `proposeChanges` (nil entries were malformed); with `includingCurrentRevision`, a
    /// conflict names the current revision when the pusher may see it.
    func propose(_ changes: [ProposedChange?], includingCurrentRevision: Bool) async throws -> [ProposalAnswer]

    /// Checks a received `rev` before anything is fetched for it (its IDs, whether the store takes pushes).
    func admit(_ revision: RevisionMessage) throws

    /// The body of a stored revision as `rev` messages carry it, for applying a delta (404 when gone).
    func deltaBase(documentID: String, revisionID: String) async throws -> [String: JSONValue]

    /// Whether the store holds the content of an attachment stub a pushed revision of `documentID` names.
    func holding(attachment digest: String, of documentID: String) async throws -> AttachmentHolding

    /// Stores a pushed revision made elsewhere.
    func store(_ revision: IncomingRevision) async throws

    /// The pusher was asked for these revisions (the reply to its offer, before it is sent).
    func expectRevisions(_ revisions: [(documentID: String, revisionID: String)])

    /// A revision arrived and will not reach ``store(_:)`` (refused before, or a `norev`); nil IDs when the message
    /// named none.
    func settleRevision(documentID: String?, revisionID: String?)
}

extension PassiveSyncStore {
    public func admitsWork() -> Bool { true }
    public var executor: (any TaskExecutor)? { nil }
    public func expectRevisions(_ revisions: [(documentID: String, revisionID: String)]) {}
    public func settleRevision(documentID: String?, revisionID: String?) {}
}

// MARK: - AttachmentHolding

/// What a store holds of an attachment a pushed revision names by its digest.
public enum AttachmentHolding: Sendable {
    /// Nothing to fetch or prove (the document has it already, or the store's content is shared by one user).
    case held
    /// Stored, but for another document: the pusher must prove it holds the content (§3.9), or a user could take
    /// another's attachment by naming its digest.
    case heldElsewhere([UInt8])
    /// Not stored: the session fetches it (`getAttachment`).
    case absent
}

// MARK: - IncomingRevision

/// A pushed revision ready to store: its message, its body (metadata removed, any delta applied, `_attachments` still
/// stubs), and the content fetched for the stubs the store lacked, by attachment name (checked against its digest).
public struct IncomingRevision: Sendable {
    /// The `rev` message (its body is the one as received).
    public var message: RevisionMessage
    /// The revision's properties.
    public var body: [String: JSONValue]
    /// Fetched attachment content by name.
    public var attachments: [String: [UInt8]]

    /// A revision.
    public init(message: RevisionMessage, body: [String: JSONValue], attachments: [String: [UInt8]] = [:]) {
        self.message = message
        self.body = body
        self.attachments = attachments
    }
}
