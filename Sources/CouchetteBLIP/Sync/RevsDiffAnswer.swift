import CouchetteCore

// MARK: - RevsDiffAnswer

/// The answer to one entry of a `changes` message (spec: blip-sync-protocol.md §3.5), as `_revs_diff` answers a REST
/// pusher: `0` when the receiver has the revision, else the revisions of that document it has that may be ancestors
/// (`[]` for none), which the sender then leaves out of the `rev`'s history and may use as a delta's base.
///
/// ```swift
/// RevsDiffAnswer.answers(in: Array(#"[0,["1-a"]]"#.utf8), count: 3)  // [.have, .wanted(["1-a"]), .have]
/// ```
public enum RevsDiffAnswer: Sendable, Hashable {
    /// Not wanted: the receiver has it.
    case have
    /// Wanted; the receiver holds these possible ancestors.
    case wanted(knownAncestors: [String])

    /// The answer as it travels.
    public var json: JSONValue {
        switch self {
        case .have: 0
        case .wanted(let known): .array(known.map(JSONValue.string))
        }
    }

    /// The answer `json` holds: an array is wanted, anything else not.
    public init(json: JSONValue) {
        guard case .array(let known) = json else {
            self = .have
            return
        }
        self = .wanted(knownAncestors: known.compactMap(\.stringValue))
    }

    /// The answers of a reply's body, one per entry asked about (`count`): those left out at the end are `.have`.
    public static func answers(in body: [UInt8], count: Int) -> [RevsDiffAnswer] {
        let items = (try? JSONValue(parsing: body).arrayValue) ?? []
        return (0..<count).map { $0 < items.count ? RevsDiffAnswer(json: items[$0]) : .have }
    }
}
