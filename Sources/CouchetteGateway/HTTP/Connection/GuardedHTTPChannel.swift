import CouchetteBLIP
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

// MARK: - GuardedHTTPChannel

/// An HTTP/1 child channel with a ``ConnectionGuard`` right after its request decoder: what the decoder cannot
/// parse gets an answer, and idle or slow connections close; then, when given, an ``UpgradeGate``.
///
/// Wraps any HTTP/1 child channel (the gateway's is Hummingbird's WebSocket-upgrading one); TLS wraps this one.
struct GuardedHTTPChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    /// The channel whose pipeline is guarded.
    let base: Base
    /// The limits the guard enforces.
    let limits: ConnectionLimits
    /// Where the guard's lines go.
    let log: @Sendable (String) -> Void
    /// Makes each connection's ``UpgradeGate``, placed after the guard; nil for none.
    var upgradeGate: (@Sendable () -> UpgradeGate)? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = limits
        let log = log
        let upgradeGate = upgradeGate
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.syncOptions?.setOption(.recvAllocator, value: Self.receiveBuffers)
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let connectionGuard = ConnectionGuard(limits: limits, log: log)
            try pipeline.addHandler(connectionGuard, position: .after(decoder))
            if let upgradeGate { try pipeline.addHandler(upgradeGate(), position: .after(connectionGuard)) }
            return value
        }
    }

    /// Read buffers start at 512 bytes (NIO's default: 2,048) and grow as reads fill them: a connection keeps its
    /// last read buffer, which for an idle `_changes` feed held only its request.
    static var receiveBuffers: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
