// MARK: - ChangesFeed

/// The life of one `_changes` feed, as a sequence of events: entries as they become visible, heartbeats while
/// idle, and the end (spec: gateway-rest-api.md §11.2, §11.3).
///
/// Each ``next()`` reads from the ``ChangesReader``; once caught up, it waits on the database's
/// ``ChangeNotifier`` against the heartbeat or timeout deadline:
///
/// - `normal` ends when caught up;
/// - `longpoll` ends once it has sent something and is caught up, or on timeout;
/// - `continuous` and `websocket` report ``Event/caughtUp`` once, then keep waiting; they end on timeout, when
///   `limit` entries were sent, when the notifier closes (database offline, server shutdown) or when the task is
///   cancelled.
///
/// A user's feed reloads the user when it starts and whenever it wakes (sync-function.md §8.2–§8.5): channels
/// granted after the request's `since` are first backfilled (``ChangesBackfill``, entries `N:S`), channels that
/// appear while the feed is open are backfilled up to the feed's position, and a `_user/` entry at the latest
/// backfilled grant (``ChangesRow/user(_:sequence:)``) then takes `last_seq` past it; revoked channels stop being
/// read, and a user deleted or disabled since ends the feed. Each pass reads up to the notifier's sequence taken
/// before the reload, so every grant at or before it is in the reloaded user.
///
/// ```swift
/// var feed = ChangesFeed(reader: reader, notifier: database.changeNotifier)
/// while let event = try await feed.next() {
///     switch event {
///     case .entries(let rows): send(rows)
///     case .heartbeat: send("\n")
///     case .caughtUp: break
///     }
/// }
/// ```
public struct ChangesFeed: Sendable {
    // MARK: - Event

    /// What a feed has to say next.
    public enum Event: Sendable, Hashable {
        /// New entries, in sequence order (never empty).
        case entries([ChangesRow])
        /// The feed has sent everything there was (streaming feeds, once).
        case caughtUp
        /// Nothing happened for a heartbeat interval.
        case heartbeat
    }

    /// Whether the feed reloads its user.
    private enum Reloading: Sendable {
        /// Not yet loaded: the first load decides.
        case first
        /// At every wake.
        case always
        /// Never: the admin, an anonymous caller, or a user who is not stored (built in memory).
        case never
    }

    // MARK: - Properties

    /// Reads the entries; replaced when the user is reloaded.
    public private(set) var reader: ChangesReader

    /// Wakes the feed when the database changes.
    public let notifier: ChangeNotifier

    /// The sequence of the last entry sent (`N:S` for a backfilled one), else the request's `since` (`last_seq`).
    public private(set) var lastSequence: ChangeSequence

    /// How many entries were sent.
    public private(set) var sentCount = 0

    /// The backfill under way, if any.
    public private(set) var backfill: ChangesBackfill?

    private var options: ChangesOptions { reader.options }
    /// The sequence the normal (non-backfill) feed has read up to.
    private var position: UInt64
    /// The last sequence the current pass reads (the notifier's, taken before the reload).
    private var end: UInt64 = 0
    /// Whether the next pass takes its end from the storage (``GatewayStorage/readableSequence(announcedBy:)``)
    /// rather than the notifier: the first pass, and one after a read found entries past its end.
    private var endFromStorage = true
    /// The sequence of the grant behind the last backfill, where a `_user/` entry is still to be sent.
    private var userEntry: UInt64?
    private var reloading: Reloading
    private var needsReload = true
    private var needsRead = true
    private var reportedCaughtUp = false
    private var lastActivity: ContinuousClock.Instant
    private var finished = false
    /// `revoked` entries still to send at the end of the pass (`revocations=true`).
    private var pendingRevocations: [ChangesRow] = []

    // MARK: - Initialiser

    /// Creates a feed starting after the reader's `since`.
    public init(reader: ChangesReader, notifier: ChangeNotifier) {
        self.reader = reader
        self.notifier = notifier
        self.position = reader.options.since.normalPosition
        self.lastSequence = reader.options.since
        self.reloading = reader.caller.user == nil ? .never : .first
        self.lastActivity = .now
    }

    // MARK: - Events

    /// What ``step()`` found: an event, the end, or a wait on the notifier.
    public enum Step: Sendable, Hashable {
        /// An event to deliver.
        case event(Event)
        /// The feed is over.
        case finished
        /// Nothing to deliver until the database passes `sequence` or `deadline` passes: wait on the notifier (with
        /// ``ChangeNotifier/wait(after:deadline:)`` or ``ChangeNotifier/whenChanged(_:after:deadline:_:)``), then
        /// hand its outcome to ``resume(after:)``.
        case wait(after: UInt64, deadline: ContinuousClock.Instant?)
    }

    /// The next event, or nil when the feed is over.
    ///
    /// - Throws: ``GatewayError`` from the storage; the feed is over after it.
    public mutating func next() async throws(GatewayError) -> Event? {
        while true {
            switch try await step() {
            case .event(let event):
                return event
            case .finished:
                return nil
            case .wait(let sequence, let deadline):
                if let event = resume(after: await notifier.wait(after: sequence, deadline: deadline)) { return event }
            }
        }
    }

    /// The next event or the end when there is one now, else the wait that comes before it — without waiting on the
    /// notifier, so that a feed can wait for the next change without a task
    /// (``ChangeNotifier/whenChanged(_:after:deadline:_:)``). It suspends only while the storage reads.
    ///
    /// - Throws: ``GatewayError`` from the storage; the feed is over after it.
    public mutating func step() async throws(GatewayError) -> Step {
        while !finished {
            if let limit = options.limit, sentCount >= limit { break }
            if options.feed != .normal, notifier.isClosed { break }
            if needsRead {
                let rows: [ChangesRow]
                do {
                    rows = try await read()
                } catch {
                    finished = true
                    throw error
                }
                if let last = rows.last {
                    sentCount += rows.count
                    lastSequence = last.sequence
                    lastActivity = .now
                    return .event(.entries(rows))
                }
                continue
            }
            switch options.feed {
            case .normal:
                finished = true
            case .longpoll:
                if sentCount > 0 { finished = true }
            case .continuous, .websocket:
                if !reportedCaughtUp {
                    reportedCaughtUp = true
                    return .event(.caughtUp)
                }
            }
            if finished { break }
            includeDeletionsFromNowOn()
            return .wait(after: position, deadline: deadline)
        }
        finished = true
        return .finished
    }

    /// Takes the outcome of the wait ``step()`` asked for; returns the heartbeat it means, if any (then or otherwise,
    /// ``step()`` goes on).
    public mutating func resume(after outcome: ChangeNotifier.WaitOutcome) -> Event? {
        switch outcome {
        case .changed:
            needsRead = true
            needsReload = true
        case .deadline where options.heartbeat != nil:
            lastActivity = .now
            return .heartbeat
        case .deadline, .closed:
            finished = true
        }
        return nil
    }

    /// Ends `active_only` once the feed has caught up, as Sync Gateway does: it spares a client starting from nothing
    /// the tombstones of the past, but a deletion or a removal from the caller's channels made after that is news
    /// the client must get (a device would otherwise keep the document for good: its checkpoint moves past it).
    private mutating func includeDeletionsFromNowOn() {
        guard options.activeOnly else { return }
        var options = options
        options.activeOnly = false
        reader = ChangesReader(database: reader.database, caller: reader.caller, options: options)
    }

    // MARK: - Reading

    /// One read of the current pass: the reload at its start, then the backfill's entries until it is done, then
    /// normal entries up to the pass's end. Ends the feed (no rows) when the user was deleted or disabled.
    private mutating func read() async throws(GatewayError) -> [ChangesRow] {
        if needsReload {
            needsReload = false
            // Taken before the reload: every change up to it (grants included) is committed and in the user. The
            // first pass asks the storage, so that a feed requested after a write reads it.
            end =
                endFromStorage
                ? try await reader.database.storage.readableSequence(announcedBy: notifier) : notifier.lastSequence
            endFromStorage = false
            guard try await reload() else {
                finished = true
                needsRead = false
                return []
            }
        }
        let limit = options.limit.map { $0 - sentCount }
        if let pending = backfill {
            let batch = try await reader.readBackfill(pending, limit: limit)
            backfill = batch.isExhausted ? nil : pending.resumed(after: batch.position)
            return batch.rows
        }
        // With a `_user/` entry due within the pass, read up to it first.
        let userEntry = self.userEntry.flatMap { $0 <= end ? $0 : nil }
        let batch = try await reader.read(after: position, through: userEntry ?? end, limit: limit)
        position = batch.position
        guard batch.isExhausted else { return batch.rows }
        var rows = batch.rows
        if let userEntry {
            position = max(position, userEntry)
            self.userEntry = nil
            let sentAtIt = (rows.last?.sequence ?? lastSequence) == ChangeSequence(userEntry)
            if !sentAtIt, limit.map({ rows.count < $0 }) ?? true, let user = reader.caller.user {
                rows.append(ChangesRow.user(user.name, sequence: userEntry))
            }
            return rows  // The pass goes on after the entry.
        }
        // Everything up to the end was committed before the read, so nothing before it is missed.
        position = max(position, end)
        if !pendingRevocations.isEmpty {
            // At the end of the pass, at its end sequence: `last_seq` only moves forward, and a client resuming
            // after it is not told again.
            let room = limit.map { max(0, $0 - rows.count) } ?? pendingRevocations.count
            rows += pendingRevocations.prefix(room)
            pendingRevocations.removeFirst(min(room, pendingRevocations.count))
            if !pendingRevocations.isEmpty { return rows }
        }
        if batch.passedEnd {
            // Documents changed during the pass moved past its end (a push racing this pull): another pass, to a
            // new end, sends them now rather than at the next request.
            needsReload = true
            endFromStorage = true
            return rows
        }
        needsRead = false
        return rows
    }

    /// Reloads the user and plans the backfill its new channels need; false when the feed must end.
    private mutating func reload() async throws(GatewayError) -> Bool {
        let first = reloading == .first
        guard reloading != .never else { return true }
        let outcome = try await ChangesAccess.load(
            reader.caller, from: reader.database.storage, withGrantSequences: first && plansBackfill)
        switch outcome {
        case .current(let access):
            let previous = reader.selection
            reader = reader.reading(as: access.caller)
            reloading = .always
            if options.revocations, let user = access.caller.user, let readable = access.caller.readableChannels {
                let revoked = try await reader.database.storage.submitServedChannels(readable, of: user.name, at: end)
                let since = first ? options.since.normalPosition : position
                let rows = try await reader.revocationRows(revoked, since: since, at: end)
                let pending = Set(pendingRevocations.compactMap { $0.json["id"]?.stringValue })
                pendingRevocations += rows.filter { !pending.contains($0.json["id"]?.stringValue ?? "") }
            }
            guard plansBackfill else { return true }
            if first {
                backfill = ChangesBackfill.starting(since: options.since, selection: reader.selection, access: access)
            } else if var added = ChangesBackfill.newlyVisible(before: previous, now: reader.selection, at: position),
                let user = access.caller.user
            {
                let grants = try await reader.database.storage.fetchChannelGrantSequences(of: user)
                added.noteLatestGrant(in: ChangesAccess(caller: access.caller, grantSequences: grants))
                backfill = added
            }
            if let latestGrant = backfill?.latestGrant { userEntry = latestGrant }
            return true
        case .missing where first:
            reloading = .never
            return true
        case .missing, .disabled:
            return false
        }
    }

    /// Whether the feed backfills: not with `_doc_ids`, which names its documents.
    private var plansBackfill: Bool {
        if case .documentIDs = options.filter { return false }
        return true
    }

    /// When the idle feed next sends a heartbeat or times out; nil for never.
    private var deadline: ContinuousClock.Instant? {
        if let heartbeat = options.heartbeat { return lastActivity + heartbeat }
        if let timeout = options.timeout { return lastActivity + timeout }
        return nil
    }
}
