import CouchetteCore

// MARK: - SyncChangeSource

/// The changes a `subChanges` subscription sends, as a store reads them (``PassiveSyncStore/subscribe(_:subprotocol:)``):
/// batches of entries, the moment it caught up, and — when continuous — a way to wait for more that may hold no task.
///
/// ```swift
/// switch try await source.next() {
/// case .changes(let batch): …                 // offer batch.entries, read the wanted ones with batch.reader
/// case .caughtUp: …                           // `changes []`
/// case .idle: source.whenChanged { await pump() }   // continuous, nothing new: wait
/// case .finished: …                           // one-shot done, or the database closed
/// }
/// ```
public protocol SyncChangeSource: AnyObject, Sendable {
    /// The next step of the feed. Deletions left out under `activeOnly` come once it has caught up.
    func next() async throws -> SyncFeedStep

    /// After ``SyncFeedStep/idle``: runs `wake` in a task of its own once there may be changes (or a timeout passed,
    /// or the source was stopped, after which ``next()`` finishes).
    func whenChanged(_ wake: @escaping @Sendable () async -> Void)

    /// No more steps: a wait under way ends.
    func stop()
}

/// A step of a ``SyncChangeSource``.
public enum SyncFeedStep: Sendable {
    /// Changes to offer.
    case changes(SyncChangeBatch)
    /// Everything there was has been offered.
    case caughtUp
    /// Nothing new (continuous): wait with ``SyncChangeSource/whenChanged(_:)``.
    case idle
    /// The feed ended: a one-shot one is done; a continuous one's database closed.
    case finished
}

/// Entries to offer in `changes` messages, and how to read the revisions the subscriber wants of them.
public struct SyncChangeBatch: Sendable {
    /// The entries, in sequence order (a conflicted document's leaves each have one when all were asked for).
    public var entries: [OfferedChange]
    /// Reads the wanted revisions (as the subscriber's access is now).
    public var reader: any SyncRevisionReader

    /// A batch.
    public init(entries: [OfferedChange], reader: any SyncRevisionReader) {
        self.entries = entries
        self.reader = reader
    }
}

/// Reads the revisions a subscriber asked for.
public protocol SyncRevisionReader: Sendable {
    /// The `rev` (or `norev`) for each wanted entry, in order, with at most `maxHistory` ancestors, as a delta
    /// against a known ancestor when `deltas` (the subscriber takes them) and the store makes them.
    func revisions(_ wanted: [WantedChange], maxHistory: Int, deltas: Bool) async throws -> [OutgoingRevision]
}

/// An entry the subscriber asked for, with the ancestors it holds.
public struct WantedChange: Sendable {
    /// The entry offered.
    public var entry: OfferedChange
    /// What it holds of the document (possible ancestors, newest first).
    public var knownAncestors: [String]

    /// A wanted entry.
    public init(entry: OfferedChange, knownAncestors: [String]) {
        self.entry = entry
        self.knownAncestors = knownAncestors
    }
}

/// What answers a wanted entry.
public enum OutgoingRevision: Sendable {
    /// The revision, and the digests of its attachments (the subscriber may fetch them while it awaits its answer).
    case revision(RevisionMessage, attachmentDigests: [String])
    /// A `norev`: it cannot be read (status and reason).
    case missing(WantedChange, status: Int, reason: String)
}
