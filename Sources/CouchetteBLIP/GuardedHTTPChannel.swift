import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

// MARK: - GuardedHTTPChannel

/// An HTTP/1 child channel with a ``ConnectionGuard`` right after its request decoder: what the decoder cannot
/// parse gets an answer, and idle or slow connections close; then, when given, an ``UpgradeGate``.
///
/// Wraps any HTTP/1 child channel (the gateway's and a Lite listener's are Hummingbird's WebSocket-upgrading one); TLS
/// wraps this one.
public struct GuardedHTTPChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value

    /// The channel whose pipeline is guarded.
    let base: Base
    /// The limits the guard enforces.
    let limits: ConnectionLimits
    /// Where the guard's lines go.
    let log: @Sendable (String) -> Void
    /// Makes each connection's ``UpgradeGate``, placed after the guard; nil for none.
    let upgradeGate: (@Sendable () -> UpgradeGate)?

    /// Guards `base`'s connections.
    ///
    /// - Parameters:
    ///   - base: The HTTP/1 child channel; its pipeline must hold an HTTP request decoder.
    ///   - limits: The limits to enforce (give `base` the same, ``ConnectionLimits/http1Configuration``).
    ///   - upgradeGate: Makes each connection's ``UpgradeGate``; nil for none.
    ///   - log: Where the one line about a refused or timed-out connection goes.
    public init(
        base: Base, limits: ConnectionLimits, upgradeGate: (@Sendable () -> UpgradeGate)? = nil,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.base = base
        self.limits = limits
        self.upgradeGate = upgradeGate
        self.log = log
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
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

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
