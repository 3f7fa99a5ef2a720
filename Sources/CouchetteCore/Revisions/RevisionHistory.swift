/// A revision's ancestry in the `_revisions` form: `{"start": 3, "ids": ["c", "b", "a"]}` means
/// `3-c → 2-b → 1-a`, newest first (`replication-protocol.md` §3).
///
/// ```swift
/// let history = try RevisionHistory(json: ["start": 3, "ids": ["c", "b", "a"]])
/// history.revisionIDs.map(\.description)     // ["3-c", "2-b", "1-a"]
/// ```
public struct RevisionHistory: Sendable, Hashable {
    /// The generation of the newest revision.
    public let start: Int
    /// Digests, newest first; `ids[i]` has generation `start - i`.
    public let ids: [String]

    /// Creates a history, checking that it is well-formed.
    ///
    /// - Throws: ``CoreError`` `.invalidRevisionHistory` when `ids` is empty, `start` is smaller than the number
    ///   of IDs, or a digest is not valid.
    public init(start: Int, ids: [String]) throws(CoreError) {
        guard !ids.isEmpty else { throw CoreError(.invalidRevisionHistory, "Bad _revisions: ids is empty") }
        guard start >= ids.count else {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: start \(start) is less than the \(ids.count) ids")
        }
        for (offset, digest) in ids.enumerated() {
            do {
                _ = try RevisionID(generation: start - offset, digest: digest)
            } catch {
                throw CoreError(.invalidRevisionHistory, "Bad _revisions: id \(offset) is not a valid digest")
            }
        }
        self.start = start
        self.ids = ids
    }

    /// A history from rev IDs, newest first, each the parent of the one before it.
    ///
    /// - Throws: ``CoreError`` `.invalidRevisionHistory` when the list is empty or the generations are not
    ///   consecutive (a gap).
    public init(revisionIDs: [RevisionID]) throws(CoreError) {
        guard let first = revisionIDs.first else {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: empty history")
        }
        try RevisionHistory.checkConsecutive(revisionIDs)
        self.start = first.generation
        self.ids = revisionIDs.map(\.digest)
    }

    /// The history of a revision whose ancestry may skip generations (one joined to an older revision, see
    /// ``RevisionTree/insert(_:body:deleted:history:)``): `_revisions` cannot tell of a gap, so it ends before the
    /// first one, as Sync Gateway's does. Nil when `revisionIDs` is empty.
    public init?(leadingRunOf revisionIDs: [RevisionID]) {
        guard let first = revisionIDs.first else { return nil }
        let gap = revisionIDs.indices.dropLast().first { revisionIDs[$0 + 1].generation != revisionIDs[$0].generation - 1 }
        start = first.generation
        ids = revisionIDs[...(gap ?? revisionIDs.count - 1)].map(\.digest)
    }

    /// Reads a `_revisions` JSON object.
    ///
    /// - Throws: ``CoreError`` `.invalidRevisionHistory` for anything but `{"start": Int, "ids": [String]}` with
    ///   valid values.
    public init(json: JSONValue) throws(CoreError) {
        guard case .object(let members) = json else {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: expected an object, found \(json.typeDescription)")
        }
        guard case .int(let start)? = members["start"], let startValue = Int(exactly: start) else {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: start must be an integer")
        }
        guard case .array(let idValues)? = members["ids"] else {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: ids must be an array of strings")
        }
        var ids: [String] = []
        ids.reserveCapacity(idValues.count)
        for value in idValues {
            guard case .string(let id) = value else {
                throw CoreError(.invalidRevisionHistory, "Bad _revisions: ids must be an array of strings")
            }
            ids.append(id)
        }
        try self.init(start: startValue, ids: ids)
    }

    /// The expanded rev IDs, newest first.
    public var revisionIDs: [RevisionID] {
        ids.enumerated().map { offset, digest in
            // Validated in init.
            try! RevisionID(generation: start - offset, digest: digest)
        }
    }

    /// The newest revision.
    public var newest: RevisionID { try! RevisionID(generation: start, digest: ids[0]) }

    /// The `_revisions` JSON object.
    public var json: JSONValue {
        .object(["start": .int(Int64(start)), "ids": .array(ids.map(JSONValue.string))])
    }

    /// Checks that `revisionIDs` runs newest first with each generation one below the previous.
    ///
    /// - Throws: ``CoreError`` `.invalidRevisionHistory` naming the first gap.
    public static func checkConsecutive(_ revisionIDs: some Collection<RevisionID>) throws(CoreError) {
        for (newer, older) in zip(revisionIDs, revisionIDs.dropFirst()) where older.generation != newer.generation - 1 {
            throw CoreError(.invalidRevisionHistory, "Bad _revisions: gap between \(newer) and \(older)")
        }
    }

    /// The history cut just after the first entry found in `knownRevisions` (`revs_from` / `atts_since`),
    /// and to at most `limit` entries.
    public func truncated(limit: Int? = nil, after knownRevisions: Set<RevisionID> = []) -> RevisionHistory {
        var kept = ids
        if !knownRevisions.isEmpty,
            let index = revisionIDs.firstIndex(where: { knownRevisions.contains($0) })
        {
            kept = Array(kept.prefix(index + 1))
        }
        if let limit, limit >= 1 { kept = Array(kept.prefix(limit)) }
        return try! RevisionHistory(start: start, ids: kept)
    }
}
