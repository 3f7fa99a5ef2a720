import NIOCore
import NIOPosix

// MARK: - DelayProxy

/// A TCP proxy on loopback that hands each chunk on a fixed time after it arrived, each way, for a PostgreSQL "a few
/// milliseconds away": a network's latency without a network's absence of cost on this machine's cores. It runs on
/// one event loop thread; the tests' `ChaosProxy` (which cuts and holds connections too) runs four threads per
/// connection and wakes about three of them per chunk, work a real network does not put on the gateway's machine.
///
/// ```swift
/// let proxy = try DelayProxy(targetPort: 5432, delayEachWay: .milliseconds(25))
/// // connect to proxy.port: every round trip takes 50 ms more
/// proxy.stop()
/// ```
final class DelayProxy: Sendable {
    /// The port the proxy listens on (127.0.0.1).
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel

    /// Starts a proxy to `127.0.0.1:targetPort`.
    init(targetPort: Int, delayEachWay: TimeAmount) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMapThrowing { outbound in
                        try inbound.pipeline.syncOperations.addHandler(
                            DelayedForwarder(peer: outbound, delay: delayEachWay))
                        try outbound.pipeline.syncOperations.addHandler(
                            DelayedForwarder(peer: inbound, delay: delayEachWay))
                    }
            }
        do {
            listener = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = listener.localAddress?.port ?? 0
        self.group = group
    }

    /// Stops listening and closes every connection.
    func stop() {
        try? listener.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// Hands what its channel reads to `peer` (on the same event loop) `delay` after each read, in order; closes the peer
/// once its channel has closed and the chunks in flight are handed on.
private final class DelayedForwarder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let peer: any Channel
    private let delay: TimeAmount
    private var inFlight = CircularBuffer<(due: NIODeadline, bytes: ByteBuffer)>()
    private var closed = false

    init(peer: any Channel, delay: TimeAmount) {
        self.peer = peer
        self.delay = delay
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let due = NIODeadline.now() + delay
        inFlight.append((due, unwrapInboundIn(data)))
        if inFlight.count == 1 { handOn(at: due, on: context.eventLoop) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        if inFlight.isEmpty { peer.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func handOn(at due: NIODeadline, on loop: any EventLoop) {
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(deadline: due) { bound.value.handOnDue() }
    }

    /// Writes every chunk that is due, then waits for the next.
    private func handOnDue() {
        let now = NIODeadline.now()
        while let first = inFlight.first, first.due <= now {
            inFlight.removeFirst()
            peer.write(first.bytes, promise: nil)
        }
        peer.flush()
        if let next = inFlight.first {
            handOn(at: next.due, on: peer.eventLoop)
        } else if closed {
            peer.close(promise: nil)
        }
    }
}
