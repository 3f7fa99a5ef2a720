import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

// MARK: - DetachingGate

/// Takes the first request of a connection out of Hummingbird's hands when its ``Rule`` applies, so that a response
/// which may stay open for hours (a continuous `_changes` feed) is served without the connection's task.
///
/// Hummingbird serves a connection from one task that lives as long as the connection, and Swift's task allocator
/// keeps the frames of that task's stack (~16 KB: the server's connection handling, the request loop, the response
/// writer) while a response waits. ``GuardedHTTPChannel`` places the gate right after its ``ConnectionGuard`` (which
/// keeps bounding the connection); for a detached request, the connection's task runs ``Rule/serve`` instead of
/// handing the connection to Hummingbird, and ends once it returns, having started the response: whatever goes on
/// writing it (a feed woken by its notifier) writes through the ``DetachedExchange``.
///
/// Only the first request can be detached: once Hummingbird serves a connection it holds it to the end. Any other
/// first request passes on, and the gate leaves the pipeline. Anything a client sends after a detached request is
/// dropped; the detached response should say `Connection: close`, and close the connection when it ends. A client
/// half-closing a detached connection is taken to have left: the connection closes (HTTP clients do not half-close
/// while reading a response; a feed then frees its registration at once rather than at its next write). The base
/// channel must set up its request handling when the first request arrives, as Hummingbird's WebSocket-upgrading
/// channel does, so that a detached connection never has any.
public final class DetachingGate: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart

    // MARK: - Rule

    /// Which first requests are detached, and what serves them.
    public struct Rule: Sendable {
        /// Whether a connection's first request is detached (cheap: on the event loop).
        public var applies: @Sendable (HTTPRequestHead) -> Bool
        /// Serves a detached request, given its head (its body is dropped) and the exchange to answer on, in the
        /// connection's task: it returns once the response is under way, and what goes on writing it runs without.
        public var serve: @Sendable (HTTPRequest, DetachedExchange) async -> Void

        /// A rule detaching the requests `applies` picks, served by `serve`.
        public init(
            applies: @escaping @Sendable (HTTPRequestHead) -> Bool,
            serve: @escaping @Sendable (HTTPRequest, DetachedExchange) async -> Void
        ) {
            self.applies = applies
            self.serve = serve
        }
    }

    /// A detached request: its head, and the exchange to answer on.
    public struct Detached: Sendable {
        /// The request's head.
        public var request: HTTPRequest
        /// Where its response goes.
        public var exchange: DetachedExchange
    }

    // MARK: - State

    private let rule: Rule
    /// Succeeds with the detached first request, or nil when it was not (or the connection closed before one).
    private let decided: EventLoopPromise<Detached?>
    private var isDecided = false
    /// Whether the first request was detached: what follows it is dropped.
    private var isDetached = false
    /// The detached request's exchange, until the connection closes.
    private var exchange: DetachedExchange?

    /// A gate applying `rule`, telling `decided` what it did with the first request.
    init(rule: Rule, decided: EventLoopPromise<Detached?>) {
        self.rule = rule
        self.decided = decided
    }

    // MARK: - Inbound

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The rest of a detached request, and anything after it, goes nowhere.
        guard !isDetached else { return }
        guard !isDecided, case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        isDecided = true
        guard rule.applies(head), let request = try? HTTPRequest(head, secure: false, splitCookie: false) else {
            decided.succeed(nil)
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        let exchange = DetachedExchange(context: context)
        self.exchange = exchange
        isDetached = true
        decided.succeed(Detached(request: request, exchange: exchange))
    }

    public func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        exchange?.writabilityChanged(to: context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A client half-closing a detached exchange has left.
        if isDetached, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        closed()
    }

    /// The connection closed: a connection closed before its first request is not detached (Hummingbird's handling
    /// then finds it closed); a detached one's exchange hears of it and is let go (it holds this handler's context).
    private func closed() {
        exchange.take()?.connectionClosed()
        guard !isDecided else { return }
        isDecided = true
        decided.succeed(nil)
    }
}
