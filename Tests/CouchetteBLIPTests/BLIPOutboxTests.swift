import NIOCore
import Testing

@testable import CouchetteBLIP

/// The order frames leave in and flow control (blip-sync-protocol.md §2.8, §2.9).
@Suite(.timeLimit(.minutes(1))) struct BLIPOutboxTests {
    /// The message number of each frame `outbox` gives until it has nothing to send.
    private func drain(_ outbox: BLIPOutbox, into reader: BLIPFrameReader? = nil) throws -> [UInt64] {
        var numbers: [UInt64] = []
        while let frame = try outbox.nextFrame() {
            var copy = frame
            numbers.append(try BLIPVarint.read(from: &copy))
            _ = try reader?.read(frame)
        }
        return numbers
    }

    private func request(_ number: UInt64, bytes: Int = 0, urgent: Bool = false) -> BLIPMessage {
        .request(number: number, properties: ["Profile": "x"], body: [UInt8](repeating: 7, count: bytes), isUrgent: urgent)
    }

    @Test func messagesTakeTurnsFrameByFrame() throws {
        let outbox = BLIPOutbox()
        try outbox.enqueue(request(1, bytes: 10_000))
        try outbox.enqueue(request(2, bytes: 6_000))
        // 4 KiB frames while both wait; 16 KiB once one is alone.
        #expect(try drain(outbox) == [1, 2, 1, 2, 1])
        #expect(outbox.isEmpty)
    }

    @Test func anUrgentMessageGoesAfterTheLastUrgentOneLeavingOneNormalBetween() throws {
        let outbox = BLIPOutbox()
        for number: UInt64 in 1...3 { try outbox.enqueue(request(number, bytes: 20_000)) }
        // Each has started (one frame sent), so a new urgent message may pass them.
        #expect(try [outbox.nextFrame(), outbox.nextFrame(), outbox.nextFrame()].count == 3)
        try outbox.enqueue(request(4, urgent: true))  // no urgent one queued: after the first message
        try outbox.enqueue(request(5, urgent: true))  // after 4, with one normal message between
        #expect(try drain(outbox).prefix(5) == [1, 4, 2, 5, 3])
    }

    @Test func aNewUrgentMessageNeverPassesAMessageThatHasNotStarted() throws {
        let outbox = BLIPOutbox()
        try outbox.enqueue(request(1, bytes: 20_000))
        try outbox.enqueue(request(2))
        try outbox.enqueue(request(3, urgent: true))
        #expect(try drain(outbox) == [1, 2, 3, 1])  // 3 waits behind 2, which has not started
    }

    @Test func aMessageWaitsForAcknowledgementsAndFinishesWithThem() throws {
        let outbox = BLIPOutbox()
        let size = 600_000
        try outbox.enqueue(request(1, bytes: size))
        try outbox.enqueue(request(2, bytes: 100))
        let reader = BLIPFrameReader()
        var sent = 0
        var received: [BLIPMessage] = []
        var pauses = 0
        while !outbox.isEmpty {
            guard let frame = try outbox.nextFrame() else {
                pauses += 1
                Issue.record("stalled with nothing to send")
                break
            }
            sent += frame.readableBytes
            for event in try reader.read(frame) {
                switch event {
                case .message(let message): received.append(message)
                case .acknowledgement(let acknowledgement):
                    // The peer's acknowledgement, read on this side and handed to the outbox.
                    for ack in try BLIPFrameReader().read(acknowledgement) {
                        guard case .acknowledged(let ofResponse, let number, let bytes) = ack else { continue }
                        outbox.acknowledged(ofResponse: ofResponse, number: number, bytes: bytes)
                    }
                default: Issue.record("unexpected \(event)")
                }
            }
        }
        #expect(pauses == 0)
        #expect(received.map(\.number) == [2, 1])
        #expect(received.last?.body.count == size)
    }

    @Test func withoutAcknowledgementsAMessageStopsAtTheLimit() throws {
        let outbox = BLIPOutbox()
        try outbox.enqueue(request(1, bytes: 1_000_000))
        var sent: UInt64 = 0
        while let frame = try outbox.nextFrame() { sent += UInt64(frame.readableBytes) }
        #expect(!outbox.isEmpty)
        #expect(sent >= BLIPOutbox.maximumUnacknowledgedBytes && sent < BLIPOutbox.maximumUnacknowledgedBytes + 20_000)
        // An acknowledgement of something else changes nothing; one of this message lets it go on.
        outbox.acknowledged(ofResponse: true, number: 1, bytes: sent)
        #expect(try outbox.nextFrame() == nil)
        outbox.acknowledged(ofResponse: false, number: 1, bytes: sent)
        #expect(try outbox.nextFrame() != nil)
    }
}
