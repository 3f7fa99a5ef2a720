import CouchetteCore

// MARK: - RevisionMessage

/// A `rev` message (spec: blip-sync-protocol.md §3.6), both ways: a revision with its history, its deletion, the
/// sequence of the `changes` entry it answers (sent by a side feeding changes), whether the receiver must refuse a
/// conflict (`noconflicts`), the base of a delta (`deltaSrc`, §4.1), and its body (JSON, `_attachments` as stubs;
/// the revision's own metadata travels as properties).
///
/// ```swift
/// let message = try RevisionMessage(request)      // reading a received `rev`
/// try await connection.post(properties: message.properties, body: message.body, compressed: true)
/// ```
public struct RevisionMessage: Sendable, Hashable {
    /// The document.
    public var documentID: String
    /// The revision.
    public var revisionID: String
    /// Its ancestors, newest first (the revision itself not included); it may skip generations where it joins a
    /// revision the receiver has (LiteCore sends at most `maxHistory`, then one the server has).
    public var history: [String]
    /// Whether the revision is a tombstone.
    public var isDeleted: Bool
    /// The sequence of the `changes` entry the revision answers; nil from a pusher.
    public var sequence: String?
    /// Whether the receiver must refuse (409) a revision not descending from the document's current one there.
    public var noConflicts: Bool
    /// The revision the body is a delta against; nil for a whole body.
    public var deltaSource: String?
    /// The body's JSON bytes (empty for `{}`).
    public var body: [UInt8]

    /// A message.
    public init(
        documentID: String, revisionID: String, history: [String] = [], isDeleted: Bool = false,
        sequence: String? = nil, noConflicts: Bool = false, deltaSource: String? = nil, body: [UInt8] = []
    ) {
        self.documentID = documentID
        self.revisionID = revisionID
        self.history = history
        self.isDeleted = isDeleted
        self.sequence = sequence
        self.noConflicts = noConflicts
        self.deltaSource = deltaSource
        self.body = body
    }

    /// The message `request` carries.
    ///
    /// - Throws: ``BLIPError/refused(status:reason:)`` 400 without `id` or `rev`.
    public init(_ request: BLIPMessage) throws(BLIPError) {
        let properties = request.properties
        guard let id = properties["id"], let revision = properties["rev"] else {
            throw .refused(status: 400, reason: "rev needs id and rev")
        }
        self.init(
            documentID: id, revisionID: revision,
            history: (properties["history"] ?? "").split(separator: ",").map(String.init),
            isDeleted: properties.flag("deleted"), sequence: properties["sequence"],
            noConflicts: properties.flag("noconflicts"), deltaSource: properties["deltaSrc"], body: request.body)
    }

    /// The revision and its history, newest first.
    public var ancestry: [String] { [revisionID] + history }

    /// The request's properties.
    public var properties: BLIPProperties {
        var properties: BLIPProperties = ["Profile": "rev", "id": documentID, "rev": revisionID]
        if let sequence { properties["sequence"] = sequence }
        if !history.isEmpty { properties["history"] = history.joined(separator: ",") }
        if isDeleted { properties["deleted"] = "1" }
        if noConflicts { properties["noconflicts"] = "true" }
        if let deltaSource { properties["deltaSrc"] = deltaSource }
        return properties
    }

    /// The body's members as received (`{}` when empty; see ``properties(of:)`` for the revision's properties).
    ///
    /// - Throws: ``BLIPError/refused(status:reason:)`` 400 when it is not a JSON object.
    public func bodyObject() throws(BLIPError) -> [String: JSONValue] {
        let parsed: JSONValue
        do {
            parsed = body.isEmpty ? .object([:]) : try JSONValue(parsing: body)
        } catch {
            throw .refused(status: 400, reason: "Invalid JSON in the body of \"\(documentID)\"")
        }
        guard case .object(let members) = parsed else {
            throw .refused(status: 400, reason: "The body of \"\(documentID)\" is not a JSON object")
        }
        return members
    }

    /// `body` without its revision metadata (`_id`, `_rev`, `_deleted`, `_revisions`), which travels as properties;
    /// the base a delta applies to is the same (§4). Nil when it is not an object.
    public static func properties(of body: JSONValue) -> [String: JSONValue]? {
        guard case .object(var members) = body else { return nil }
        for key in ["_id", "_rev", "_deleted", "_revisions"] { members[key] = nil }
        return members
    }

    /// A `norev` (§3.7): the revision wanted cannot be sent.
    public static func missing(
        documentID: String, revisionID: String, sequence: String?, status: Int, reason: String
    ) -> BLIPProperties {
        var properties: BLIPProperties = [
            "Profile": "norev", "id": documentID, "rev": revisionID, "error": String(status), "reason": reason,
        ]
        if let sequence { properties["sequence"] = sequence }
        return properties
    }
}
