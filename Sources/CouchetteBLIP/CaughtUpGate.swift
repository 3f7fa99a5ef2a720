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
/// await gate.batchQueued()                                           // before queueing each `changes` batch
/// let reply = try await gate.answer(to: number, on: connection)      // in the batch's task; then its revisions
/// try await gate.caughtUp(on: connection)                            // the feed caught up
/// ```
public actor CaughtUpGate {
    private var outstanding = 0
    private var due = false
    private var sent = false

    public init() {}

    /// A batch is about to be queued: `[]` waits for its answer.
    public func batchQueued() {
        outstanding += 1
    }

    /// A batch counted by ``batchQueued()`` could not be queued (the connection closed).
    public func batchFailed() {
        outstanding -= 1
    }

    /// Waits for the client's answer to the batch numbered `number` on `connection`, posting `[]` first when it is
    /// due and this was the last batch outstanding; the caller then sends the batch's revisions.
    ///
    /// - Throws: When the connection closes (the batch counts as answered).
    public nonisolated func answer(to number: UInt64, on connection: BLIPConnection) async throws -> BLIPMessage {
        let reply: BLIPMessage
        do {
            reply = try await connection.response(to: number)
        } catch {
            await batchFailed()
            throw error
        }
        if await batchAnswered() { try await Self.postCaughtUp(on: connection) }
        return reply
    }

    /// The feed caught up: `[]` goes out now when no batch awaits its answer, else once the last one is answered
    /// (``answer(to:on:)``). Once only.
    public nonisolated func caughtUp(on connection: BLIPConnection) async throws {
        if await markCaughtUp() { try await Self.postCaughtUp(on: connection) }
    }

    private func batchAnswered() -> Bool {
        outstanding -= 1
        return claim()
    }

    private func markCaughtUp() -> Bool {
        guard !sent else { return false }
        due = true
        return claim()
    }

    private static func postCaughtUp(on connection: BLIPConnection) async throws {
        try await connection.post(properties: ["Profile": "changes"], body: Array("[]".utf8))
    }

    private func claim() -> Bool {
        guard due, !sent, outstanding <= 0 else { return false }
        sent = true
        return true
    }
}
