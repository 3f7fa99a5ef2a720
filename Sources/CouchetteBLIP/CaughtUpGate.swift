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
/// await gate.batchQueued()                       // before queueing each `changes` batch
/// if await gate.caughtUp() { post("[]") }        // the feed caught up: now, or by the last batch's task
/// // in a batch's task, once the client answered it:
/// if await gate.batchAnswered() { post("[]") }   // then send its revisions
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

    /// The client answered a batch (or it failed): true when the caller is to post `[]` now, before the batch's
    /// revisions.
    public func batchAnswered() -> Bool {
        outstanding -= 1
        return claim()
    }

    /// The feed caught up: true when the caller is to post `[]` now; else it goes out when the last batch is
    /// answered (``batchAnswered()``). Once only.
    public func caughtUp() -> Bool {
        guard !sent else { return false }
        due = true
        return claim()
    }

    private func claim() -> Bool {
        guard due, !sent, outstanding <= 0 else { return false }
        sent = true
        return true
    }
}
