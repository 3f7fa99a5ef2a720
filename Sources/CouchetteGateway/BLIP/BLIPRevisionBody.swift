import CouchetteCore

// MARK: - BLIPRevisionBody

/// A revision's body as `rev` messages carry it, both ways: the document's properties, without `_id`, `_rev`,
/// `_deleted` and `_revisions`, which travel as the message's properties (spec: blip-sync-protocol.md §3.6); the base
/// a delta applies to is the same (§4).
enum BLIPRevisionBody {
    /// `body` without its revision metadata; nil when it is not an object.
    static func properties(of body: JSONValue) -> [String: JSONValue]? {
        guard case .object(var members) = body else { return nil }
        for key in ["_id", "_rev", "_deleted", "_revisions"] { members[key] = nil }
        return members
    }
}
