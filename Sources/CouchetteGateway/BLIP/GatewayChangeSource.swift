import CouchetteBLIP
import CouchetteCore
import Synchronization

// MARK: - GatewayChangeSource

/// The changes a user's BLIP subscription is sent (``SyncChangeSource``): a ``ChangesFeed`` of the user's channels
/// (narrowed by `sync_gateway/bychannel` or the subscription's `docIDs`), each row one entry — one per leaf of a
/// conflicted document when the subscriber asked for every leaf — with revocation entries for a Couchbase Lite 3
/// client that takes them.
///
/// A caught-up continuous source holds no task: ``whenChanged(_:)`` registers a wake-up with the database's notifier
/// (``ChangesFeedParking``), so a thousand idle subscriptions cost their state and registrations only
/// (`blip.feeds-kb`).
final class GatewayChangeSource: SyncChangeSource {
    /// The database and the caller who subscribed.
    let target: AuthorizedDatabase
    /// Whether revoked documents come as revocation entries (`deleted` 2–3) instead of `_removed` revisions.
    let revocations: Bool
    /// Whether every leaf of a conflicted document is offered.
    let allLeaves: Bool

    private struct State {
        /// The feed between ``next()`` calls while a run holds it, and after ``SyncFeedStep/idle`` until it is parked
        /// (boxed: an idle subscription's feed is in the parking, and this slot costs a pointer).
        var held: HeldFeed?
        /// Where the feed waits from, after ``SyncFeedStep/idle``.
        var waiting: (sequence: UInt64, deadline: ContinuousClock.Instant?)?
        /// How the last wait ended, for the feed to resume by.
        var outcome: ChangeNotifier.WaitOutcome?
    }

    private let parking: ChangesFeedParking
    private let state = Mutex(State())

    /// The source of `subscription` as `target`'s caller reads it.
    ///
    /// - Throws: 400 for an unknown filter, a missing or empty channel list, or a malformed `since`.
    init(_ subscription: SubChangesRequest, target: AuthorizedDatabase) throws(GatewayError) {
        self.target = target
        revocations = subscription.revocations
        allLeaves = subscription.allLeaves
        let notifier = target.database.changeNotifier
        let since =
            subscription.since == "now"
            ? ChangeSequence(notifier.lastSequence) : try ChangeSequence.parse(subscription.since ?? "")
        var options = ChangesOptions(
            feed: subscription.continuous ? .continuous : .normal, since: since,
            includeAllLeaves: subscription.allLeaves, activeOnly: subscription.activeOnly,
            filter: try Self.filter(of: subscription), heartbeat: nil, timeout: nil)
        options.revocations = subscription.revocations
        let reader = ChangesReader(database: target.database, caller: target.caller, options: options)
        parking = ChangesFeedParking(ChangesFeed(reader: reader, notifier: notifier))
    }

    /// The subscription's narrowing: its `docIDs`, else a channel filter.
    private static func filter(of subscription: SubChangesRequest) throws(GatewayError) -> ChangesFilter {
        if let ids = subscription.documentIDs { return .documentIDs(ids) }
        guard let name = subscription.filter, !name.isEmpty else { return .none }
        guard name == ChangesFilter.byChannelName else {
            throw .badRequest("Unknown filter; try sync_gateway/bychannel or _doc_ids")
        }
        guard let list = subscription.channels else { throw .badRequest("Missing 'channels' filter parameter") }
        let channels = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        guard !channels.isEmpty else { throw .badRequest("Empty channel list") }
        return .channels(channels)
    }

    // MARK: - SyncChangeSource

    func next() async throws -> SyncFeedStep {
        let (held, outcome) = state.withLock { ($0.held.take()?.feed, $0.outcome.take()) }
        guard var feed = held ?? parking.take() else { return .finished }
        if let outcome { _ = feed.resume(after: outcome) }
        while true {
            switch try await feed.step() {
            case .event(.entries(let rows)):
                // Revisions are read as the feed's caller now: a user granted a channel since the connection opened
                // reads its documents (the feed reloads the user as their access changes).
                let reader = GatewayRevisionReader(
                    reader: AuthorizedDatabase(database: target.database, caller: feed.reader.caller))
                let entries = rows.filter { !($0.json["id"]?.stringValue?.hasPrefix("_user/") ?? true) }
                    .flatMap(entries(of:))
                guard !entries.isEmpty else { continue }
                state.withLock { $0.held = HeldFeed(feed) }
                return .changes(SyncChangeBatch(entries: entries, reader: reader))
            case .event(.caughtUp):
                state.withLock { $0.held = HeldFeed(feed) }
                return .caughtUp
            case .event(.heartbeat):
                continue
            case .finished:
                return .finished
            case .wait(let sequence, let deadline):
                state.withLock { state in
                    state.held = HeldFeed(feed)
                    state.waiting = (sequence, deadline)
                }
                return .idle
            }
        }
    }

    func whenChanged(_ wake: @escaping @Sendable () async -> Void) {
        let parked = state.withLock { state in
            state.waiting.take().flatMap { at in state.held.take().map { ($0.feed, at) } }
        }
        guard let (feed, waiting) = parked else {
            Task(executorPreference: target.database.executor) { await wake() }
            return
        }
        parking.park(feed, after: waiting.sequence, deadline: waiting.deadline) { [self] outcome in
            state.withLock { $0.outcome = outcome }
            await wake()
        }
    }

    func stop() {
        parking.stop()
    }

    /// A feed held between steps.
    private final class HeldFeed: Sendable {
        let feed: ChangesFeed
        init(_ feed: ChangesFeed) { self.feed = feed }
    }

    // MARK: - Entries

    /// A row's entries: `[sequence, docID, revID]`, then `deleted` (1 tombstone, 2 revoked, 3 revoked tombstone) when
    /// set; one per leaf of a conflicted document when every leaf was asked for (the row's `deleted` tells of the
    /// winner, the first; a conflicting leaf's own flag travels in its `rev`).
    private func entries(of row: ChangesRow) -> [OfferedChange] {
        let sequence = Self.sequenceValue(row.sequence)
        let id = row.json["id"]?.stringValue ?? ""
        let deleted = row.json["deleted"] == true
        var flags = deleted ? OfferedChange.deleted : 0
        if revocations, row.json["revoked"] == true { flags |= OfferedChange.revoked }
        let leaves = (row.json["changes"]?.arrayValue ?? []).compactMap { $0["rev"]?.stringValue }
        let offered = allLeaves && flags & OfferedChange.revoked == 0 ? leaves : Array(leaves.prefix(1))
        return (offered.isEmpty ? [""] : offered).enumerated().map { index, revision in
            OfferedChange(sequence: sequence, documentID: id, revisionID: revision, flags: index == 0 ? flags : 0)
        }
    }

    /// A sequence as the protocol writes it: a number, or `"N:S"` for a backfilled entry.
    static func sequenceValue(_ sequence: ChangeSequence) -> JSONValue {
        sequence.isBackfill ? .string(sequence.description) : .int(Int64(clamping: sequence.sequence))
    }
}
