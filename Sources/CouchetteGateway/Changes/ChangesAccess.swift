// MARK: - ChangesAccess

/// What a feed's user can read at one moment, loaded afresh from the storage: the caller with its channels and,
/// when asked, the sequence at which each channel was granted (spec: sync-function.md §7.3, §8.2–§8.3).
///
/// Feeds reload it when they start and whenever they wake, so that grants and revocations made while a feed is open
/// take effect in it.
///
/// ```swift
/// switch try await ChangesAccess.load(caller, from: database.storage, withGrantSequences: true) {
/// case .current(let access): access.grantSequence(of: "b")  // 7: "b" was granted at sequence 7
/// case .missing: break   // the user is not stored (built in memory): use the caller as given
/// case .disabled: break  // the user was deleted or disabled since: end the feed
/// }
/// ```
struct ChangesAccess: Sendable {
    // MARK: - Outcome

    /// The result of a load.
    enum Outcome: Sendable {
        /// The user as stored now.
        case current(ChangesAccess)
        /// No user of that name is stored.
        case missing
        /// The user is disabled.
        case disabled
    }

    // MARK: - Properties

    /// The reloaded caller, with every channel it can read.
    var caller: Caller

    /// Each readable channel with the sequence at which the user gained it (1: from the start); empty when not
    /// loaded.
    var grantSequences: [String: UInt64]

    // MARK: - Loading

    /// Reloads the user behind `caller` (the admin and anonymous callers come back unchanged).
    ///
    /// - Parameters:
    ///   - caller: The caller to refresh.
    ///   - storage: The database's storage.
    ///   - withGrantSequences: Whether to compute ``grantSequences`` (only backfill planning at a feed's start
    ///     needs them).
    /// - Throws: ``GatewayError`` from the storage.
    static func load(_ caller: Caller, from storage: any GatewayStorage, withGrantSequences: Bool)
        async throws(GatewayError) -> Outcome
    {
        guard let user = caller.user else { return .current(ChangesAccess(caller: caller, grantSequences: [:])) }
        guard let stored = try await storage.fetchUser(named: user.name) else { return .missing }
        if stored.disabled { return .disabled }
        let channels = try await storage.fetchAllChannels(of: stored)
        let grants = withGrantSequences ? try await storage.fetchChannelGrantSequences(of: stored) : [:]
        return .current(ChangesAccess(caller: .user(stored, channels: channels), grantSequences: grants))
    }

    // MARK: - Grant sequences

    /// The channels of `channels` the user gained after `threshold` (``grantSequence(of:)`` above it).
    ///
    /// With many channels the grants are visited rather than the channels, comparing sequences before looking
    /// anything up: a feed start costs little when few grants are new. A selected channel without a grant sequence
    /// there is one taken away between the two reads that made this access (the channels are read first), so it
    /// has nothing to backfill.
    func channels(grantedAfter threshold: UInt64, among channels: Set<String>) -> Set<String> {
        guard channels.count > ChannelIndex.channelListLimit, grantSequences[PrincipalName.allChannels] == nil else {
            return channels.filter { grantSequence(of: $0) > threshold }
        }
        var granted: Set<String> = []
        for (channel, sequence) in grantSequences where sequence > threshold && channels.contains(channel) {
            granted.insert(channel)
        }
        return granted
    }

    /// When the user gained `channel`: its own grant or that of `*`, whichever came first. A channel without a
    /// known grant (a grant that landed between two storage reads) counts as granted last, so it is backfilled.
    func grantSequence(of channel: String) -> UInt64 {
        let own = grantSequences[channel] ?? .max
        let wildcard = grantSequences[PrincipalName.allChannels] ?? .max
        return min(own, wildcard)
    }
}
