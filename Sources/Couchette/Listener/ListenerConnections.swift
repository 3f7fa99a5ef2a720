import CouchetteBLIP
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

// MARK: - ListenerConnections

/// The connections a ``URLEndpointListener`` accepted and that are still open, so that stopping ends them all: a
/// client's idle pooled connection (or one opened and never used) would otherwise hold the server's shutdown until
/// the client drops it, and a BLIP connection or continuous feed until the peer hangs up.
final class ListenerConnections: Sendable {
    private let open = Mutex<[ObjectIdentifier: any Channel]>([:])

    /// Keeps `channel` until it closes.
    func add(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        open.withLock { $0[key] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.open.withLock { $0.removeValue(forKey: key) }
        }
    }

    /// Closes every open connection.
    func closeAll() {
        let channels = open.withLock { open in
            defer { open = [:] }
            return Array(open.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    /// A child channel that hands each accepted connection to `connections`, then sets it up as `base` does, with
    /// `gate` (when given) right after its HTTP request decoder, and closes it when its first request's head has not
    /// arrived within `firstRequestTimeout` (Hummingbird's idle timeout counts only between requests).
    struct Tracked<Base: ServerChildChannel>: ServerChildChannel {
        typealias Value = Base.Value

        let base: Base
        let connections: ListenerConnections
        var gate: (@Sendable () -> UpgradeGate)? = nil
        var firstRequestTimeout: TimeAmount? = nil

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
            connections.add(channel)
            let gate = gate
            let firstRequestTimeout = firstRequestTimeout
            return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let pipeline = channel.pipeline.syncOperations
                let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                if let gate { try pipeline.addHandler(gate(), position: .after(decoder)) }
                if let firstRequestTimeout {
                    let closing = channel.eventLoop.scheduleTask(in: firstRequestTimeout) { channel.close(promise: nil) }
                    try pipeline.addHandler(FirstRequestWatch(closing: closing), position: .after(decoder))
                }
                return value
            }
        }

        func handle(value: Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }
}

// MARK: - FirstRequestWatch

/// Cancels a connection's scheduled close once its first request head arrives, then leaves the pipeline.
private final class FirstRequestWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let closing: Scheduled<Void>

    init(closing: Scheduled<Void>) {
        self.closing = closing
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let isHead = if case .head = unwrapInboundIn(data) { true } else { false }
        if isHead { closing.cancel() }
        context.fireChannelRead(data)
        if isHead { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closing.cancel()
    }
}
