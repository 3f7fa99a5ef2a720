import CouchetteCore

// MARK: - OfferedChange

/// One entry of a `changes` message (spec: blip-sync-protocol.md §3.4): `[sequence, docID, revID, flags?]`, as a
/// side feeding changes sends it, a subscriber reads it, and a pusher offers its own revisions.
///
/// ```swift
/// let entry = OfferedChange(sequence: 12, documentID: "a", revisionID: "2-b", flags: OfferedChange.deleted)
/// entry.json.serializedString()  // [12,"a","2-b",1]
/// ```
public struct OfferedChange: Sendable, Hashable {
    /// The entry's sequence as the feeding side writes it: a number, or a string (`"N:S"` for a backfilled entry).
    public var sequence: JSONValue
    /// The document.
    public var documentID: String
    /// The revision offered.
    public var revisionID: String
    /// 0, or ``deleted``, ``revoked``, both, or 4 (removed from a channel, §3.4.2).
    public var flags: Int

    /// The flag of a tombstone.
    public static let deleted = 1
    /// The flag of a document the subscriber lost access to (it purges it).
    public static let revoked = 2

    /// An entry.
    public init(sequence: JSONValue, documentID: String, revisionID: String, flags: Int = 0) {
        self.sequence = sequence
        self.documentID = documentID
        self.revisionID = revisionID
        self.flags = flags
    }

    /// Whether the revision is a tombstone.
    public var isDeleted: Bool { flags & Self.deleted != 0 }

    /// Whether the subscriber lost access to the document (revoked, or removed from its channels).
    public var isRevoked: Bool { flags >= Self.revoked }

    /// The entry as it travels; the flags only when set.
    public var json: JSONValue {
        var items: [JSONValue] = [sequence, .string(documentID), .string(revisionID)]
        if flags != 0 { items.append(.int(Int64(flags))) }
        return .array(items)
    }

    /// The entry `json` holds; nil without a document and revision (a client's `true` for "deleted" is read as 1).
    public init?(json: JSONValue) {
        guard let id = json[1]?.stringValue, let revision = json[2]?.stringValue else { return nil }
        let flag = json[3]
        self.init(
            sequence: json[0] ?? 0, documentID: id, revisionID: revision,
            flags: flag.flatMap { $0.intValue.map(Int.init) ?? ($0.boolValue == true ? 1 : 0) } ?? 0)
    }

    /// A `changes` message's body.
    public static func body(of entries: [OfferedChange]) -> [UInt8] {
        JSONValue.array(entries.map(\.json)).serialized()
    }

    /// The entries of a `changes` message's body, in order; nil where an entry names no document or revision (its
    /// answer is then `0`).
    ///
    /// - Throws: ``BLIPError/refused(status:reason:)`` 400 when the body is not a JSON array.
    public static func entries(in body: [UInt8]) throws(BLIPError) -> [OfferedChange?] {
        guard case .array(let items)? = try? JSONValue(parsing: body) else {
            throw .refused(status: 400, reason: "changes needs a JSON array")
        }
        return items.map(OfferedChange.init(json:))
    }
}
