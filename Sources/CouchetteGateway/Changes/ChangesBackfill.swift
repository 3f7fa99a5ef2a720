// MARK: - ChangesBackfill

/// The re-sending of channels a user gained after the position their feed starts from (spec: sync-function.md §8.2,
/// §8.3; the sequence scheme is in `docs/decisions.md`, "Gateway `_changes`").
///
/// A feed after `N` whose user holds channels granted after `N` first sends those channels' current entries with
/// sequence `S ≤ N`, each as `N:S`; entries after `N` come through the normal feed, which now includes the channels.
///
/// ```swift
/// // alice synced up to 9; channel "b" was granted to her at 12.
/// let backfill = ChangesBackfill.starting(since: 9, selection: .channels(["!", "a", "b"]), access: access)
/// // ChangesBackfill(triggeredBy: 9, after: 0, selection: .channels(["b"]), latestGrant: 12)
/// ```
public struct ChangesBackfill: Sendable, Hashable {
    // MARK: - Properties

    /// The position that triggered the backfill (`N`): only entries with sequence `≤ N` are sent.
    public var triggeredBy: UInt64

    /// The sequence already backfilled (`S` of the last `N:S` sent), 0 at the start.
    public var after: UInt64

    /// The channels backfilled (``ChangesReader/Selection/everything`` for a user newly granted `*`).
    public var selection: ChangesReader.Selection

    /// The latest of the backfilled channels' grants, when known: the feed sends a `_user/` entry at this sequence
    /// (``ChangesRow/user(_:sequence:)``) so that `last_seq` passes it.
    public var latestGrant: UInt64?

    // MARK: - Initialiser

    /// Creates a backfill.
    public init(
        triggeredBy: UInt64, after: UInt64 = 0, selection: ChangesReader.Selection, latestGrant: UInt64? = nil
    ) {
        self.triggeredBy = triggeredBy
        self.after = after
        self.selection = selection
        self.latestGrant = latestGrant
    }

    /// The same backfill, advanced to `position`.
    func resumed(after position: UInt64) -> ChangesBackfill {
        var resumed = self
        resumed.after = position
        return resumed
    }

    /// Sets ``latestGrant`` from the user's grant sequences (left nil when none of them is known, or none is after
    /// the trigger).
    mutating func noteLatestGrant(in access: ChangesAccess) {
        let sequences: [UInt64]
        switch selection {
        case .everything: sequences = [access.grantSequence(of: PrincipalName.allChannels)]
        case .channels(let channels): sequences = channels.map(access.grantSequence(of:))
        }
        latestGrant = sequences.filter { $0 != .max && $0 > triggeredBy }.max()
    }

    // MARK: - Planning

    /// The backfill a feed starting at `since` owes its user: the selected channels granted after
    /// `since`'s normal position `N` (and after 1: grants from the start never backfill), resuming after `S` when
    /// `since` is `N:S`. Nil when there is nothing to backfill.
    ///
    /// - Parameters:
    ///   - since: The request's `since`.
    ///   - selection: The channels the feed reads, as the freshly loaded user allows.
    ///   - access: The freshly loaded user, with its grant sequences.
    static func starting(
        since: ChangeSequence, selection: ChangesReader.Selection, access: ChangesAccess
    ) -> ChangesBackfill? {
        let trigger = since.normalPosition
        // Grants at sequence 1 (from the start) never exceed a trigger, which is at least 1.
        guard trigger > 0, access.caller.user != nil else { return nil }
        let threshold = trigger
        let backfilled: ChangesReader.Selection
        switch selection {
        case .everything:
            guard access.grantSequence(of: PrincipalName.allChannels) > threshold else { return nil }
            backfilled = .everything
        case .channels(let channels):
            let granted = access.channels(grantedAfter: threshold, among: channels)
            guard !granted.isEmpty else { return nil }
            backfilled = .channels(granted)
        }
        var backfill = ChangesBackfill(
            triggeredBy: trigger, after: since.isBackfill ? since.sequence : 0, selection: backfilled)
        backfill.noteLatestGrant(in: access)
        return backfill
    }

    /// The backfill an open feed at `position` owes its user after a reload: the channels selected now that were
    /// not before (the feed has sent none of their entries up to `position`). Nil when there are none; its
    /// ``latestGrant`` is for the caller to note.
    static func newlyVisible(
        before previous: ChangesReader.Selection, now current: ChangesReader.Selection, at position: UInt64
    ) -> ChangesBackfill? {
        guard position > 0 else { return nil }
        switch (previous, current) {
        case (.everything, _):
            return nil
        case (.channels, .everything):
            return ChangesBackfill(triggeredBy: position, selection: .everything)
        case (.channels(let old), .channels(let new)):
            let added = new.subtracting(old)
            return added.isEmpty ? nil : ChangesBackfill(triggeredBy: position, selection: .channels(added))
        }
    }
}
