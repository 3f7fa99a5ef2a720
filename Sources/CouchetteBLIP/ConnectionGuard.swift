import NIOCore
import NIOHTTP1

// MARK: - ConnectionGuard

/// Sits right after the HTTP/1 decoder of every connection and keeps clients from holding the server:
///
/// - a request the decoder cannot parse (control bytes, a bad `Content-Length`, bytes that are not HTTP) gets a
///   400, a head past ``ConnectionLimits/maxHeaderBytes`` or ``ConnectionLimits/maxHeaderCount`` a 431, and a
///   request target past ``ConnectionLimits/maxURLLength`` a 414; then the connection closes and one line is logged;
/// - a connection with no request in progress (a fresh one, one between requests, one whose head never
///   completes) closes after ``ConnectionLimits/idleTimeout``;
/// - a request whose body does not arrive within ``ConnectionLimits/readTimeout`` of its head gets a 408 and a close;
/// - a response the client does not read for ``ConnectionLimits/writeTimeout`` closes the connection;
/// - graceful shutdown (`ChannelShouldQuiesceEvent`) closes idle connections at once and busy ones once their
///   response ends, or after ``ConnectionLimits/shutdownTimeout``.
///
/// Streaming responses (continuous and long-poll feeds) are requests in progress, never idle. A connection's first
/// request asking for a protocol upgrade (a WebSocket) removes the guard: the upgrader replaces the HTTP handlers
/// (later requests cannot be upgraded, and the guard stays). Everything runs on the channel's event loop.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    // MARK: - State

    private let limits: ConnectionLimits
    private let log: @Sendable (String) -> Void

    /// Whether a request's head arrived and its end did not.
    private var readingRequest = false
    /// Requests whose head arrived and whose response has not ended.
    private var requestsInProgress = 0
    /// Whether a response head was written and its end was not.
    private var responding = false
    /// Whether the connection is being closed (after an error response, or for shutdown).
    private var closing = false
    /// Whether inbound parts are dropped (after a refused request).
    private var discarding = false
    /// Whether a request head arrived already: only the first can be upgraded.
    private var sawRequest = false

    private var idleTimer: Scheduled<Void>?
    private var readTimer: Scheduled<Void>?
    private var writeTimer: Scheduled<Void>?
    private var shutdownTimer: Scheduled<Void>?

    /// Creates a guard.
    ///
    /// - Parameters:
    ///   - limits: The timeouts and head limits.
    ///   - log: Where the one line about a refused or timed-out connection goes.
    init(limits: ConnectionLimits, log: @escaping @Sendable (String) -> Void) {
        self.limits = limits
        self.log = log
    }

    // MARK: - Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armIdleTimer(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
    }

    func channelActive(context: ChannelHandlerContext) {
        armIdleTimer(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        context.fireChannelInactive()
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !discarding else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            cancel(&idleTimer)
            readingRequest = true
            requestsInProgress += 1
            if head.uri.utf8.count > limits.maxURLLength {
                refuse(context, status: .uriTooLong, reason: "request target of \(head.uri.utf8.count) bytes")
                return
            }
            defer { sawRequest = true }
            if !sawRequest, head.asksForUpgrade {
                // A WebSocket upgrade: the upgrader takes the connection over (and replaces the HTTP handlers),
                // so the guard leaves before it answers. An upgrade it refuses goes on as plain HTTP/1, whose
                // idle timeout Hummingbird's connection handler enforces. Only a connection's first request can be
                // upgraded (the upgrader leaves after it): a later one asking is an HTTP request like any other.
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            readTimer = schedule(context, after: limits.readTimeout) { guardHandler, context in
                guardHandler.readTimedOut(context)
            }
        case .body:
            break
        case .end:
            readingRequest = false
            cancel(&readTimer)
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        let status: HTTPResponseStatus = parserError == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
        refuse(context, status: status, reason: "\(parserError)")
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            closing = true
            if requestsInProgress == 0 || (readingRequest && !responding) {
                context.close(promise: nil)
            } else {
                shutdownTimer = schedule(context, after: limits.shutdownTimeout) { _, context in
                    context.close(promise: nil)
                }
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            cancel(&writeTimer)
        } else if writeTimer == nil {
            writeTimer = schedule(context, after: limits.writeTimeout) { guardHandler, context in
                guardHandler.log("closing a connection whose client read nothing for \(guardHandler.limits.writeTimeout)")
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: - Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code < 200:
            break
        case .head:
            responding = true
        case .body:
            break
        case .end:
            responding = false
            requestsInProgress = max(0, requestsInProgress - 1)
            if requestsInProgress == 0 {
                if closing {
                    context.writeAndFlush(data, promise: promise)
                    context.close(promise: nil)
                    return
                }
                if !readingRequest { armIdleTimer(context) }
            }
        }
        context.write(data, promise: promise)
    }

    // MARK: - Refusals and time-outs

    /// Answers `status` (unless a response is under way), closes, and logs one line.
    private func refuse(_ context: ChannelHandlerContext, status: HTTPResponseStatus, reason: String) {
        guard !discarding else { return }
        discarding = true
        closing = true
        cancelTimers()
        let peer = context.channel.remoteAddress.map { "\($0)" } ?? "unknown peer"
        log("refused a malformed request from \(peer): \(reason) -> \(status.code)")
        if !responding { writeErrorResponse(context, status: status) }
        context.close(promise: nil)
    }

    /// The read timer fired: the body did not arrive in time.
    private func readTimedOut(_ context: ChannelHandlerContext) {
        readTimer = nil
        guard readingRequest, !discarding else { return }
        discarding = true
        closing = true
        log("closing a connection whose request body did not arrive within \(limits.readTimeout)")
        if !responding { writeErrorResponse(context, status: .requestTimeout) }
        context.close(promise: nil)
    }

    /// Writes a small JSON error response in Sync Gateway's shape, asking the client to close.
    private func writeErrorResponse(_ context: ChannelHandlerContext, status: HTTPResponseStatus) {
        let body = #"{"error":"\#(Self.errorName(status))","reason":"\#(status.reasonPhrase)"}"#
        let headers = HTTPHeaders([
            ("Connection", "close"), ("Content-Type", "application/json"), ("Content-Length", "\(body.utf8.count)"),
        ])
        responding = true
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The `error` field for a refusal status.
    private static func errorName(_ status: HTTPResponseStatus) -> String {
        switch status {
        case .requestTimeout: "Request Timeout"
        case .uriTooLong: "URI Too Long"
        case .requestHeaderFieldsTooLarge: "Request Header Fields Too Large"
        default: "Bad Request"
        }
    }

    // MARK: - Timers

    private func armIdleTimer(_ context: ChannelHandlerContext) {
        cancel(&idleTimer)
        idleTimer = schedule(context, after: limits.idleTimeout) { guardHandler, context in
            guardHandler.idleTimer = nil
            guard guardHandler.requestsInProgress == 0 else { return }
            context.close(promise: nil)
        }
    }

    private func schedule(
        _ context: ChannelHandlerContext, after delay: Duration,
        _ action: @escaping (ConnectionGuard, ChannelHandlerContext) -> Void
    ) -> Scheduled<Void> {
        context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { [self] in
            action(self, context)
        }
    }

    private func cancel(_ timer: inout Scheduled<Void>?) {
        timer?.cancel()
        timer = nil
    }

    private func cancelTimers() {
        cancel(&idleTimer)
        cancel(&readTimer)
        cancel(&writeTimer)
        cancel(&shutdownTimer)
    }
}

@available(*, unavailable)
extension ConnectionGuard: Sendable {}
