import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization

// MARK: - DetachedExchange

/// A request a ``DetachingGate`` took out of the connection's task, and the way its response goes out: parts written
/// from any task go through the gate onto the connection, and ``onClose(_:)`` hears when the connection ends.
///
/// ```swift
/// try await exchange.write([.head(HTTPResponse(status: .ok)), .body(ByteBuffer(string: "hello"))])
/// exchange.onClose { feed.stop() }
/// ```
public final class DetachedExchange: Sendable {
    /// The connection.
    public let channel: any Channel

    private struct State {
        var closed = false
        var closeHandlers: [@Sendable () -> Void] = []
    }

    /// The gate's context: writes enter the pipeline where the request left it.
    private let context: NIOLoopBound<ChannelHandlerContext>
    private let state = Mutex(State())

    /// An exchange writing through `context` (on its event loop).
    init(context: ChannelHandlerContext) {
        channel = context.channel
        self.context = NIOLoopBound(context, eventLoop: context.eventLoop)
    }

    /// Writes `parts` and flushes them. Returns at once while the connection is writable; when it is not (the client
    /// reads slower than the response goes), once these parts were handed to the socket.
    ///
    /// - Throws: `ChannelError.ioOnClosedChannel` once the connection closed, or the write's error when waited for.
    public func write(_ parts: [HTTPResponsePart]) async throws {
        guard !isClosed else { throw ChannelError.ioOnClosedChannel }
        guard let last = parts.last else { return }
        let promise: EventLoopPromise<Void>? = channel.isWritable ? nil : channel.eventLoop.makePromise()
        let context = context
        channel.eventLoop.execute { [self] in
            guard !isClosed else { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
            for part in parts.dropLast() { context.value.write(NIOAny(Self.http1(part)), promise: nil) }
            context.value.writeAndFlush(NIOAny(Self.http1(last)), promise: promise)
        }
        try await promise?.futureResult.get()
    }

    /// Closes the connection.
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

    /// The gate saw the connection close.
    func connectionClosed() {
        let handlers = state.withLock { state in
            state.closed = true
            defer { state.closeHandlers = [] }
            return state.closeHandlers
        }
        for handler in handlers { handler() }
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
