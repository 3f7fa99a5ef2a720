import HummingbirdCore
import Logging
import NIOCore
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

    /// A child channel that hands each accepted connection to `connections`, then sets it up as `base` does.
    struct Tracked<Base: ServerChildChannel>: ServerChildChannel {
        typealias Value = Base.Value

        let base: Base
        let connections: ListenerConnections

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
            connections.add(channel)
            return base.setup(channel: channel, logger: logger)
        }

        func handle(value: Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }
}
