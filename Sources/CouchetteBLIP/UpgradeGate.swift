import NIOCore
import NIOHTTP1

// MARK: - UpgradeGate

/// Answers with an HTTP error, before Hummingbird's WebSocket upgrader sees them, the upgrade requests a check
/// refuses: Couchbase Lite opens `/{db}/_blipsync` without credentials and sends them only after a `401` challenge
/// (spec: blip-sync-protocol.md §1.4), and wrong ones must get a `401` too, while Hummingbird answers every declined
/// upgrade with a bare 400. The gateway and a Lite listener both place one right after their HTTP request decoder.
///
/// Requests the gate does not apply to pass at once. For one it applies to, the request waits (its parts are held)
/// while the check runs; then it goes on to the upgrader, or the refusal is written (`Connection: close`) and the
/// connection closes. Like the ``ConnectionGuard``, the gate leaves the pipeline once it passes an upgrade on, since
/// the upgrader replaces the HTTP handlers.
public final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart

    /// An HTTP error answer: its status, headers (`Content-Type`, `Content-Length` and `Connection: close` are added)
    /// and body.
    public struct Refusal: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// Decides which request heads are checked (cheap, on the event loop).
    public typealias Applies = @Sendable (HTTPRequestHead) -> Bool
    /// The check, given the request's head and connection: the error to answer with, or nil to let the request go on.
    public typealias Check = @Sendable (HTTPRequestHead, any Channel) async -> Refusal?

    private let applies: Applies
    private let check: Check
    /// The parts of the request being checked, held until the check ends.
    private var held: [NIOAny]?

    /// A gate holding the requests `applies` picks while `check` decides.
    public init(applies: @escaping Applies, check: @escaping Check) {
        self.applies = applies
        self.check = check
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if held != nil {
            held?.append(data)
            return
        }
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        guard applies(head) else {
            context.fireChannelRead(data)
            if head.asksForUpgrade {
                leave(context)
            }
            return
        }
        held = [data]
        let check = check
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let channel = context.channel
        Task {
            let refusal = await check(head, channel)
            eventLoop.execute {
                let (gate, context) = loopBound.value
                gate.decided(refusal, context: context)
            }
        }
    }

    /// Leaves the pipeline: once an upgrade request passed, the connection carries WebSocket frames, not HTTP parts.
    private func leave(_ context: ChannelHandlerContext) {
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func decided(_ refusal: Refusal?, context: ChannelHandlerContext) {
        let parts = held ?? []
        held = nil
        guard let refusal else {
            for part in parts { context.fireChannelRead(part) }
            leave(context)
            return
        }
        var headers = HTTPHeaders()
        for field in refusal.headers { headers.add(name: field.name, value: field.value) }
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(refusal.body.count))
        headers.add(name: "Connection", value: "close")
        let body = refusal.body
        let status = HTTPResponseStatus(statusCode: refusal.status)
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
