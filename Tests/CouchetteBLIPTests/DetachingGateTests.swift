import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

@testable import CouchetteBLIP

// MARK: - DetachingGateTests

/// The gate on a test channel: which first requests it takes, what becomes of what follows them, how a detached
/// response goes out and ends, and that a closed connection lets its exchange go.
@Suite("DetachingGate and DetachedExchange", .timeLimit(.minutes(1)))
struct DetachingGateTests {
    /// Detaches requests for `/detach…`; serving is the test's business.
    static let rule = DetachingGate.Rule(applies: { $0.uri.hasPrefix("/detach") }, serve: { _, _ in })

    /// A channel with a gate, and what the gate decides.
    static func gated() async throws -> (NIOAsyncTestingChannel, EventLoopFuture<DetachingGate.Detached?>) {
        let channel = NIOAsyncTestingChannel()
        let decided = channel.eventLoop.makePromise(of: DetachingGate.Detached?.self)
        try await channel.pipeline.addHandler(DetachingGate(rule: rule, decided: decided))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 4984))
        return (channel, decided.futureResult)
    }

    /// Tells the pipeline the channel's writability changed, on its event loop, and returns once the gate heard it.
    static func writabilityChanged(_ channel: NIOAsyncTestingChannel) async throws {
        try await channel.testingEventLoop.executeInContext {
            channel.pipeline.syncOperations.fireChannelWritabilityChanged()
        }
    }

    static func head(_ uri: String) -> HTTPServerRequestPart {
        .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri))
    }

    @Test("A first request the rule does not pick passes on, and the gate leaves")
    func otherRequestsPass() async throws {
        let (channel, decided) = try await Self.gated()
        try await channel.writeInbound(Self.head("/other"))
        #expect(try await decided.get() == nil)
        guard case .head(let passed) = try await channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("the head did not pass")
            return
        }
        #expect(passed.uri == "/other")
        await #expect(throws: (any Error).self) { try await channel.pipeline.handler(type: DetachingGate.self).get() }
        _ = try await channel.finish()
    }

    @Test("A connection closed before any request is not detached")
    func closedBeforeARequest() async throws {
        let (channel, decided) = try await Self.gated()
        _ = try await channel.finish()
        #expect(try await decided.get() == nil)
    }

    @Test("A detached request: what follows is dropped, the response goes out in order, finish ends it and closes")
    func detachedExchange() async throws {
        let channel: NIOAsyncTestingChannel
        var decided: EventLoopFuture<DetachingGate.Detached?>?  // let go, as the connection's task lets it go
        (channel, decided) = try await Self.gated()
        try await channel.writeInbound(Self.head("/detach?x=1"))
        try await channel.writeInbound(HTTPServerRequestPart.end(nil))
        try await channel.writeInbound(Self.head("/next"))
        #expect(try await channel.readInbound(as: HTTPServerRequestPart.self) == nil)

        weak var released: DetachedExchange?
        do {
            let detached = try #require(try await decided?.get())
            decided = nil
            #expect(detached.request.path == "/detach?x=1")
            let exchange = detached.exchange
            released = exchange
            let closes = ManagedCounter()
            exchange.onClose { closes.increment() }
            try await exchange.write([.head(HTTPResponse(status: .ok)), .body(ByteBuffer(string: "a"))])
            try await exchange.write([.body(ByteBuffer(string: "b"))])
            exchange.finish(nil)
            try await channel.closeFuture.get()

            var parts: [String] = []
            while let part = try await channel.readOutbound(as: HTTPServerResponsePart.self) {
                switch part {
                case .head(let head): parts.append("head \(head.status.code)")
                case .body(.byteBuffer(let buffer)): parts.append(String(buffer: buffer))
                case .body: parts.append("?")
                case .end: parts.append("end")
                }
            }
            #expect(parts == ["head 200", "a", "b", "end"])
            #expect(exchange.isClosed && closes.value == 1)
            await #expect(throws: ChannelError.ioOnClosedChannel) {
                try await exchange.write([.body(ByteBuffer(string: "late"))])
            }
            exchange.onClose { closes.increment() }  // after the close: at once
            #expect(closes.value == 2)
        }
        // Nothing holds the exchange once the connection closed and its handlers were removed (the gate held it, and
        // it held the gate's context).
        await channel.testingEventLoop.run()
        #expect(released == nil)
    }

    @Test("A write waits while the connection is not writable, and goes out once it is")
    func writesWaitForWritability() async throws {
        let (channel, decided) = try await Self.gated()
        try await channel.writeInbound(Self.head("/detach"))
        let exchange = try #require(try await decided.get()).exchange
        try await exchange.write([.head(HTTPResponse(status: .ok))])
        _ = try await channel.readOutbound(as: HTTPServerResponsePart.self)

        // The client stopped reading: NIO says the channel is not writable.
        channel.isWritable = false
        try await Self.writabilityChanged(channel)
        let write = Task { try await exchange.write([.body(ByteBuffer(string: "later"))]) }
        // The suite's time limit ends the wait if the write never waits.
        while exchange.waitingWriteCount == 0 { await Task.yield() }
        #expect(exchange.waitingWriteCount == 1)
        #expect(try await channel.readOutbound(as: HTTPServerResponsePart.self) == nil)

        channel.isWritable = true
        try await Self.writabilityChanged(channel)
        try await write.value
        guard case .body(.byteBuffer(let body)) = try await channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("the waiting write did not go out")
            return
        }
        #expect(String(buffer: body) == "later")

        // A write waiting when the connection closes fails.
        channel.isWritable = false
        try await Self.writabilityChanged(channel)
        let failing = Task { try await exchange.write([.body(ByteBuffer(string: "never"))]) }
        while exchange.waitingWriteCount == 0, !exchange.isClosed { await Task.yield() }
        _ = try await channel.finish(acceptAlreadyClosed: true)
        await #expect(throws: ChannelError.ioOnClosedChannel) { try await failing.value }
    }
}

/// A counter closures on other threads bump.
private final class ManagedCounter: Sendable {
    private let count = Mutex(0)

    func increment() { count.withLock { $0 += 1 } }

    var value: Int { count.withLock { $0 } }
}
