import NIOCore
import Testing

@testable import CouchetteBLIP

/// A connection hands its transport the frames it has ready in one call (one socket write on the gateway).
@Suite(.timeLimit(.minutes(1))) struct BLIPBatchedWriteTests {
    /// Records each call's frames; holds the first call until released, so that messages queue behind it.
    actor HeldTransport: BLIPTransport {
        private(set) var calls: [[ByteBuffer]] = []
        private var release: CheckedContinuation<Void, Never>?
        private var released = false
        private var firstCallWaiters: [CheckedContinuation<Void, Never>] = []
        private var frameWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        func send(_ frame: ByteBuffer) async throws {
            try await send(contentsOf: [frame])
        }

        func send(contentsOf frames: [ByteBuffer]) async throws {
            calls.append(frames)
            for waiter in firstCallWaiters { waiter.resume() }
            firstCallWaiters = []
            let total = calls.joined().count
            for waiter in frameWaiters where waiter.count <= total { waiter.continuation.resume() }
            frameWaiters.removeAll { $0.count <= total }
            if calls.count == 1, !released { await withCheckedContinuation { release = $0 } }
        }

        func close(code: Int, reason: String) async {}

        func firstCall() async {
            if !calls.isEmpty { return }
            await withCheckedContinuation { firstCallWaiters.append($0) }
        }

        func releaseFirstCall() {
            released = true
            release?.resume()
            release = nil
        }

        func frames(atLeast count: Int) async {
            if calls.joined().count >= count { return }
            await withCheckedContinuation { frameWaiters.append((count, $0)) }
        }
    }

    @Test("Messages queued while a write is under way go out together in the next write, in order")
    func queuedFramesGoTogether() async throws {
        let transport = HeldTransport()
        let connection = BLIPConnection(transport: transport) { _, _ in nil }
        try await connection.post(properties: ["Profile": "first"])
        await transport.firstCall()  // the sending loop now waits inside the transport
        for index in 0..<5 { try await connection.post(properties: ["Profile": "next\(index)"]) }
        await transport.releaseFirstCall()
        await transport.frames(atLeast: 6)

        #expect(await transport.calls.map(\.count) == [1, 5])
        let reader = BLIPFrameReader()
        var profiles: [String] = []
        for frame in await transport.calls.joined() {
            for case .message(let message) in try reader.read(frame) { profiles.append(message.profile ?? "") }
        }
        #expect(profiles == ["first", "next0", "next1", "next2", "next3", "next4"])
    }
}
