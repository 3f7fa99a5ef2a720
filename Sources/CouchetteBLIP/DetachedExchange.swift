import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization

// MARK: - DetachedExchange

/// A request a ``DetachingGate`` took out of the connection's task, and the way its response goes out: parts written
/// from any task go through the gate onto the connection, ``finish(_:)`` ends the response and then the connection,
/// and ``onClose(_:)`` hears when the connection ends.
///
/// A write returns once it is queued, unless the connection stopped being writable (what is queued for the socket
/// passed NIO's high-water mark, 64 KB): then it first waits until the client has read enough (the gate hears the
/// writability change). A feed woken by a change never waits; one catching up goes at the pace the client reads.
///
/// ```swift
/// try await exchange.write([.head(HTTPResponse(status: .ok)), .body(ByteBuffer(string: "hello"))])
/// exchange.onClose { feed.stop() }
/// exchange.finish(nil)
/// ```
public final class DetachedExchange: Sendable {
    /// The connection.
    public let channel: any Channel

    private struct State {
        var closed = false
        var closeHandlers: [@Sendable () -> Void] = []
        /// Whether the connection was writable when a write or a change of writability last said.
        var writable = true
        /// Writes waiting for the connection to become writable again.
        var waiting: [CheckedContinuation<Void, any Error>] = []
    }

    /// The gate's context, while the connection is open: writes enter the pipeline where the request left it.
    private let context: NIOLoopBoundBox<ChannelHandlerContext?>
    private let state = Mutex(State())

    /// An exchange writing through `context` (on its event loop).
    init(context: ChannelHandlerContext) {
        channel = context.channel
        self.context = NIOLoopBoundBox(context, eventLoop: context.eventLoop)
    }

    /// Writes `parts` and flushes them, first waiting for the connection to be writable if it is not.
    ///
    /// - Throws: `ChannelError.ioOnClosedChannel` once the connection closed.
    public func write(_ parts: [HTTPResponsePart]) async throws {
        // nil once closed; a write after the close goes nowhere (the gate let go of its context).
        guard let writable = state.withLock({ $0.closed ? nil : $0.writable }) else {
            throw ChannelError.ioOnClosedChannel
        }
        if !writable { try await untilWritable() }
        guard !parts.isEmpty else { return }
        enqueue(parts, then: nil)
    }

    /// Returns once the connection is writable again; throws once it closed.
    private func untilWritable() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let now: Result<Void, any Error>? = state.withLock { state in
                if state.closed { return .failure(ChannelError.ioOnClosedChannel) }
                if state.writable { return .success(()) }
                state.waiting.append(continuation)
                return nil
            }
            if let now { continuation.resume(with: now) }
        }
    }

    /// Ends the response with `trailers` and closes the connection once the end reached the socket (a close right
    /// away would drop what is still queued).
    public func finish(_ trailers: HTTPFields?) {
        let closed = channel.eventLoop.makePromise(of: Void.self)
        closed.futureResult.whenComplete { [channel] _ in channel.close(promise: nil) }
        enqueue([.end(trailers)], then: closed)
    }

    /// Closes the connection at once.
    public func close() {
        channel.close(promise: nil)
    }

    /// Calls `handler` once the connection closed: then, or at once if it already has.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let closed = state.withLock { state in
            if !state.closed { state.closeHandlers.append(handler) }
            return state.closed
        }
        if closed { handler() }
    }

    /// Whether the connection closed.
    public var isClosed: Bool {
        state.withLock(\.closed)
    }

    /// How many writes wait for the connection to become writable.
    var waitingWriteCount: Int {
        state.withLock(\.waiting.count)
    }

    /// The gate saw the connection close (on the event loop): the context is let go, waiting writes fail and the
    /// handlers are called.
    func connectionClosed() {
        context.value = nil
        let (handlers, waiting) = state.withLock { state in
            state.closed = true
            defer {
                state.closeHandlers = []
                state.waiting = []
            }
            return (state.closeHandlers, state.waiting)
        }
        for continuation in waiting { continuation.resume(throwing: ChannelError.ioOnClosedChannel) }
        for handler in handlers { handler() }
    }

    /// The gate saw the connection's writability change (on the event loop).
    func writabilityChanged(to writable: Bool) {
        let waiting = state.withLock { state in
            state.writable = writable
            defer { if writable { state.waiting = [] } }
            return writable ? state.waiting : []
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Writes and flushes `parts` on the event loop, completing `promise` with the last one, and notes when the
    /// connection is no longer writable after them.
    private func enqueue(_ parts: [HTTPResponsePart], then promise: EventLoopPromise<Void>?) {
        let context = context
        channel.eventLoop.execute { [self] in
            guard let context = context.value else { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
            for part in parts.dropLast() { context.write(NIOAny(Self.http1(part)), promise: nil) }
            context.writeAndFlush(NIOAny(Self.http1(parts[parts.count - 1])), promise: promise)
            if !context.channel.isWritable { state.withLock { $0.writable = false } }
        }
    }

    /// `part` as NIO's HTTP/1 types, what the pipeline carries where the gate sits.
    private static func http1(_ part: HTTPResponsePart) -> HTTPServerResponsePart {
        switch part {
        case .head(let head): .head(HTTPResponseHead(head))
        case .body(let buffer): .body(.byteBuffer(buffer))
        case .end(let trailers): .end(trailers.map(HTTPHeaders.init))
        }
    }
}
