import CouchetteCore

// MARK: - ChangesRow

/// One entry of a `_changes` feed, ready to send (spec: gateway-rest-api.md §11.2 point 3).
///
/// ```swift
/// row.json.serializedString()
/// // {"changes":[{"rev":"2-b"}],"deleted":true,"id":"doc1","seq":4}
/// backfilled.json.serializedString()
/// // {"changes":[{"rev":"1-a"}],"id":"doc0","seq":"9:2"}
/// ```
public struct ChangesRow: Sendable, Hashable {
    /// The entry's sequence: plain, or `N:S` for a backfilled entry (``ChangeSequence``).
    public var sequence: ChangeSequence

    /// The entry: `seq`, `id`, `changes`, and `deleted`, `removed`, `doc` when they apply.
    public var json: JSONValue

    /// Creates a row.
    public init(sequence: ChangeSequence, json: JSONValue) {
        self.sequence = sequence
        self.json = json
    }
}

// MARK: - User entries

extension ChangesRow {
    /// The entry `{"seq":U,"id":"_user/<name>","changes":[]}` a user's feed sends at the sequence of a grant it
    /// backfilled (spec: sync-function.md §8.4), so that `last_seq` passes the grant and a client resuming from it
    /// is not sent the backfill again. Clients ignore `_user/` entries.
    ///
    /// ```swift
    /// ChangesRow.user("alice", sequence: 5).json.serializedString()
    /// // {"changes":[],"id":"_user/alice","seq":5}
    /// ```
    public static func user(_ name: String, sequence: UInt64) -> ChangesRow {
        ChangesRow(
            sequence: ChangeSequence(sequence),
            json: ["seq": .int(Int64(clamping: sequence)), "id": .string("_user/\(name)"), "changes": []])
    }
}

// MARK: - Revocations

extension ChangesRow {
    /// The entry `{"seq":R,"id":"…","revoked":true,"changes":[{"rev":"…"}]}` a `revocations=true` feed sends for a
    /// document the user lost access to by losing a channel at sequence R (Sync Gateway 3's form).
    public static func revoked(_ documentID: String, revision: String, sequence: UInt64) -> ChangesRow {
        ChangesRow(
            sequence: ChangeSequence(sequence),
            json: [
                "seq": .int(Int64(clamping: sequence)), "id": .string(documentID), "revoked": true,
                "changes": [["rev": .string(revision)]],
            ])
    }
}
