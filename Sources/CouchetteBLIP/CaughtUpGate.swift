// MARK: - CaughtUpGate

/// Decides when a side feeding changes (the gateway's, a Lite listener's) sends its caught-up `changes []`: once the
/// client has answered every `changes` batch sent before it, and before the revisions of the last one — the order
/// Sync Gateway's messages reach a client in (batch, `[]`, revisions), without its race.
///
/// The race: a batch of a few kilobytes goes out in several frames, interleaved with other messages, while `[]` fits
/// in one; the client acts on a message when its last frame arrives, so `[]` could arrive first. LiteCore then ends a
/// one-shot pull (caught up, nothing pending) and never asks for the last batch's revisions. Once the client has
/// answered a batch it has counted the revisions it asked for, and `[]` can no longer end the pull early.
///
/// ```swift
/// let gate = CaughtUpGate()
/// let ticket = await gate.batchQueued()                                      // before queueing each batch
/// let reply = try await gate.answer(to: number, ticket: ticket, on: connection)  // in its task; then its revisions
/// try await gate.caughtUp(on: connection)                                    // the feed caught up
/// ```
///
/// Only the batches sent before the feed caught up hold `[]` back: a busy continuous feed, always with a batch
/// awaiting its answer, still tells the client once that it caught up.
public actor CaughtUpGate {
    private var nextTicket = 0
    /// The batches queued and not answered yet.
    private var outstanding: Set<Int> = []
    /// Those of them `[]` waits for: the ones outstanding when the feed caught up (nil before).
    private var awaited: Set<Int>?
    private var sent = false

    public init() {}

    /// A batch is about to be queued; its ticket names it to ``answer(to:ticket:on:)`` or ``batchFailed(_:)``.
    public func batchQueued() -> Int {
        nextTicket += 1
        outstanding.insert(nextTicket)
        return nextTicket
    }

    /// The batch of `ticket` could not be queued (the connection closed).
    public func batchFailed(_ ticket: Int) {
        _ = settled(ticket)
    }

    /// Waits for the client's answer to the batch numbered `number` (queued with `ticket`) on `connection`, posting
    /// `[]` first when it is due and this was the last batch it waited for; the caller then sends the batch's
    /// revisions.
    ///
    /// - Throws: When the connection closes (the batch counts as settled).
    public nonisolated func answer(to number: UInt64, ticket: Int, on connection: BLIPConnection) async throws
        -> BLIPMessage
    {
        let reply: BLIPMessage
        do {
            reply = try await connection.response(to: number)
        } catch {
            await batchFailed(ticket)
            throw error
        }
        if await settled(ticket) { try await Self.postCaughtUp(on: connection) }
        return reply
    }

    /// The feed caught up: `[]` goes out now when no batch sent before awaits its answer, else once the last of those
    /// is answered (``answer(to:ticket:on:)``). Once only.
    public nonisolated func caughtUp(on connection: BLIPConnection) async throws {
        if await markCaughtUp() { try await Self.postCaughtUp(on: connection) }
    }

    /// Whether `[]` is to be posted now that the batch of `ticket` is settled.
    func settled(_ ticket: Int) -> Bool {
        outstanding.remove(ticket)
        awaited?.remove(ticket)
        return claim()
    }

    func markCaughtUp() -> Bool {
        guard !sent, awaited == nil else { return false }
        awaited = outstanding
        return claim()
    }

    private func claim() -> Bool {
        guard let awaited, awaited.isEmpty, !sent else { return false }
        sent = true
        return true
    }

    private static func postCaughtUp(on connection: BLIPConnection) async throws {
        try await connection.post(properties: ["Profile": "changes"], body: Array("[]".utf8))
    }
}
