import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

// MARK: - GuardedHTTPChannel

/// An HTTP/1 child channel with a ``ConnectionGuard`` right after its request decoder: what the decoder cannot
/// parse gets an answer, and idle or slow connections close; then, when given, a ``DetachingGate`` and an
/// ``UpgradeGate``.
///
/// Wraps any HTTP/1 child channel (the gateway's and a Lite listener's are Hummingbird's WebSocket-upgrading one); TLS
/// wraps this one.
public struct GuardedHTTPChannel<Base: ServerChildChannel>: ServerChildChannel {
    /// A connection: the base channel's value, and whether its first request was detached (when a rule is given).
    public struct Value: ServerChildChannelValue {
        /// What the base channel made of the connection.
        let base: Base.Value
        /// Succeeds with the first request when the ``DetachingGate`` took it; nil without a gate.
        let detached: EventLoopFuture<DetachingGate.Detached?>?

        /// The connection.
        public var channel: any Channel { base.channel }
    }

    /// The channel whose pipeline is guarded.
    let base: Base
    /// The limits the guard enforces.
    let limits: ConnectionLimits
    /// Where the guard's lines go.
    let log: @Sendable (String) -> Void
    /// Makes each connection's ``UpgradeGate``, placed after the guard; nil for none.
    let upgradeGate: (@Sendable () -> UpgradeGate)?
    /// Which first requests are served without the connection's task; nil for none.
    let detaching: DetachingGate.Rule?

    /// Guards `base`'s connections.
    ///
    /// - Parameters:
    ///   - base: The HTTP/1 child channel; its pipeline must hold an HTTP request decoder.
    ///   - limits: The limits to enforce (give `base` the same, ``ConnectionLimits/http1Configuration``).
    ///   - upgradeGate: Makes each connection's ``UpgradeGate``; nil for none.
    ///   - detaching: Which first requests a ``DetachingGate`` serves without the connection's task; nil for none.
    ///     `base` must set up its request handling on the first request (Hummingbird's WebSocket-upgrading channel).
    ///   - log: Where the one line about a refused or timed-out connection goes.
    public init(
        base: Base, limits: ConnectionLimits, upgradeGate: (@Sendable () -> UpgradeGate)? = nil,
        detaching: DetachingGate.Rule? = nil, log: @escaping @Sendable (String) -> Void
    ) {
        self.base = base
        self.limits = limits
        self.upgradeGate = upgradeGate
        self.detaching = detaching
        self.log = log
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = limits
        let log = log
        let upgradeGate = upgradeGate
        let detaching = detaching
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.syncOptions?.setOption(.recvAllocator, value: Self.receiveBuffers)
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let connectionGuard = ConnectionGuard(limits: limits, log: log)
            try pipeline.addHandler(connectionGuard, position: .after(decoder))
            var last: any ChannelHandler = connectionGuard
            var decided: EventLoopFuture<DetachingGate.Detached?>?
            if let detaching {
                // First after the guard: what a client sends after a detached request goes no further (an upgrade
                // request pipelined behind a feed never reaches the upgrade gate).
                let promise = channel.eventLoop.makePromise(of: DetachingGate.Detached?.self)
                let gate = DetachingGate(rule: detaching, decided: promise)
                do {
                    try pipeline.addHandler(gate, position: .after(last))
                } catch {
                    promise.fail(error)
                    throw error
                }
                decided = promise.futureResult
                last = gate
            }
            if let upgradeGate { try pipeline.addHandler(upgradeGate(), position: .after(last)) }
            return Value(base: value, detached: decided)
        }
    }

    /// Read buffers start at 512 bytes (NIO's default: 2,048) and grow as reads fill them: a connection keeps its
    /// last read buffer, which for an idle `_changes` feed held only its request.
    static var receiveBuffers: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536)
    }

    /// Hands the connection to the base channel (logging through ``EndedBeforeRequestLogHandler``), unless its first
    /// request was detached: then the connection's task serves it (its task locals and cancellation reach the rule's
    /// `serve`) and ends, and the connection lives on in its pipeline.
    public func handle(value: Value, logger: Logger) async {
        if let detaching, let decided = value.detached, let detached = try? await decided.get() {
            await detaching.serve(detached.request, detached.exchange)
            return
        }
        await base.handle(value: value.base, logger: EndedBeforeRequestLogHandler.wrapping(logger))
    }
}
