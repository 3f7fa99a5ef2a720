import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

// MARK: - UpgradeGate

/// Answers with an HTTP error, before Hummingbird's WebSocket upgrader sees them, the upgrade requests a check
/// refuses: Couchbase Lite opens `/{db}/_blipsync` without credentials and sends them only after a `401` challenge
/// (spec: blip-sync-protocol.md §1.4), and wrong ones must get a `401` too, while Hummingbird answers every declined
/// upgrade with a bare 400.
///
/// Requests the gate does not apply to pass at once. For one it applies to, the request waits (its parts are held)
/// while the check runs; then it goes on to the upgrader, or the refusal is written (`Connection: close`) and the
/// connection closes. Like the ``ConnectionGuard``, the gate leaves the pipeline once it passes an upgrade on, since
/// the upgrader replaces the HTTP handlers.
final class UpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Decides which request heads are checked (cheap, on the event loop).
    typealias Applies = @Sendable (HTTPRequestHead) -> Bool
    /// The check, given the request's head and connection: the error to answer with, or nil to let the request go on.
    typealias Check = @Sendable (HTTPRequestHead, any Channel) async -> GatewayError?

    private let applies: Applies
    private let check: Check
    /// The parts of the request being checked, held until the check ends.
    private var held: [NIOAny]?

    init(applies: @escaping Applies, check: @escaping Check) {
        self.applies = applies
        self.check = check
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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
            if head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) {
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

    private func decided(_ refusal: GatewayError?, context: ChannelHandlerContext) {
        let parts = held ?? []
        held = nil
        guard let refusal else {
            for part in parts { context.fireChannelRead(part) }
            leave(context)
            return
        }
        let body = JSONRenderer().errorBody(refusal)
        var headers = HTTPHeaders()
        for field in refusal.responseHeaders { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Server", value: GatewayVersion.serverHeader)
        headers.add(name: "Connection", value: "close")
        let status = HTTPResponseStatus(statusCode: refusal.statusCode)
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
