import CouchetteCore

// MARK: - ProposedChange

/// One entry of a `proposeChanges` message (Couchbase Lite 3, spec: blip-sync-protocol.md §3.5): `[docID, revID,
/// serverRevID?]`, a revision the client offers with the current revision it believes the server has.
public struct ProposedChange: Sendable, Hashable {
    /// The document.
    public var documentID: String
    /// The revision offered.
    public var revisionID: String
    /// The server's current revision as the client knows it; nil when it knows none.
    public var serverRevisionID: String?

    /// An entry.
    public init(documentID: String, revisionID: String, serverRevisionID: String? = nil) {
        self.documentID = documentID
        self.revisionID = revisionID
        self.serverRevisionID = serverRevisionID
    }

    /// The entry as it travels.
    public var json: JSONValue {
        var items: [JSONValue] = [.string(documentID), .string(revisionID)]
        if let serverRevisionID { items.append(.string(serverRevisionID)) }
        return .array(items)
    }

    /// The entry `json` holds; nil without a document and revision. An empty server revision is none.
    public init?(json: JSONValue) {
        guard let id = json[0]?.stringValue, let revision = json[1]?.stringValue else { return nil }
        self.init(
            documentID: id, revisionID: revision,
            serverRevisionID: json[2]?.stringValue.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The entries of a `proposeChanges` body, in order; nil for a malformed one (answered 400).
    ///
    /// - Throws: ``BLIPError/refused(status:reason:)`` 400 when the body is not a JSON array.
    public static func entries(in body: [UInt8]) throws(BLIPError) -> [ProposedChange?] {
        guard case .array(let items)? = try? JSONValue(parsing: body) else {
            throw .refused(status: 400, reason: "proposeChanges needs a JSON array")
        }
        return items.map(ProposedChange.init(json:))
    }
}

// MARK: - ProposalAnswer

/// The answer to one ``ProposedChange``.
public enum ProposalAnswer: Sendable, Hashable {
    /// Send it (`0`): the document is new or deleted here, or the client knows its current revision.
    case send
    /// The revision is here already (`304`).
    case have
    /// It would conflict (`409`); with the server's current revision when the client asked (`conflictIncludesRev`)
    /// and may see it: `{"status":409,"rev":…}`.
    case conflict(currentRevisionID: String?)
    /// The entry was malformed (`400`).
    case malformed

    /// The answer as it travels.
    public var json: JSONValue {
        switch self {
        case .send: 0
        case .have: 304
        case .conflict(let current?): ["status": 409, "rev": .string(current)]
        case .conflict(nil): 409
        case .malformed: 400
        }
    }

    /// The answer `json` holds (a missing one is `.send`).
    public init(json: JSONValue?) {
        let status = json?.intValue ?? json?["status"]?.intValue ?? 0
        switch status {
        case 0: self = .send
        case 304: self = .have
        case 409: self = .conflict(currentRevisionID: json?["rev"]?.stringValue)
        default: self = .malformed
        }
    }
}
