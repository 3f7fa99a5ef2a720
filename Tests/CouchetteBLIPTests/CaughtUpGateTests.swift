import Testing

@testable import CouchetteBLIP

/// When a feed's caught-up `changes []` may go out (``CaughtUpGate``): after the batches sent before it are answered,
/// once, whatever batches come after.
@Suite(.timeLimit(.minutes(1))) struct CaughtUpGateTests {
    @Test("With no batch awaiting its answer, [] goes out at once, and only once")
    func atOnce() async {
        let gate = CaughtUpGate()
        #expect(await gate.markCaughtUp())
        #expect(await !gate.markCaughtUp())
        let later = await gate.batchQueued()
        #expect(await !gate.settled(later))
    }

    @Test("[] waits for the last batch sent before it; one failing to send counts as settled")
    func waitsForEarlierBatches() async {
        let gate = CaughtUpGate()
        let first = await gate.batchQueued()
        let second = await gate.batchQueued()
        let third = await gate.batchQueued()
        #expect(await !gate.markCaughtUp())
        #expect(await !gate.settled(second))
        await gate.batchFailed(third)
        #expect(await gate.settled(first))
        #expect(await !gate.markCaughtUp())
    }

    @Test("A busy continuous feed: batches sent after it caught up do not hold [] back")
    func laterBatchesDoNotHoldItBack() async {
        let gate = CaughtUpGate()
        let before = await gate.batchQueued()
        #expect(await !gate.markCaughtUp())
        let after = await gate.batchQueued()
        #expect(await gate.settled(before))
        #expect(await !gate.settled(after))
    }
}
