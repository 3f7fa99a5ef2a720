import CouchetteBLIP
import Logging
import NIOCore
import Synchronization

// MARK: - DetachedChangesFeed

/// A continuous `_changes` feed served without a task while it waits (spec: gateway-rest-api.md §11.3): its lines
/// and heartbeats go out through a ``DetachedExchange``, and when caught up it parks with the database's notifier
/// (``ChangesFeedParking``) and its task ends; a change, a heartbeat deadline or the end starts a new one, as
/// ``GatewayChangeSource`` does for Couchbase Lite's subscriptions.
///
/// The feed ends as a streamed one does (limit, timeout, the notifier closing, a storage error), or when the client
/// closes the connection; then the response's end is written and the connection closes.
///
/// ```swift
/// try await exchange.write([.head(response.head)])
/// await DetachedChangesFeed(feed, exchange: exchange, logger: logger).start()
/// ```
final class DetachedChangesFeed: Sendable {
    private let exchange: DetachedExchange
    private let parking: ChangesFeedParking
    private let logger: Logger
    /// Whether the response's end was written (or the connection was found closed).
    private let ended = Mutex(false)

    /// A feed sending `feed` on `exchange`, whose head was written; storage errors are logged to `logger`.
    init(_ feed: ChangesFeed, exchange: DetachedExchange, logger: Logger) {
        self.exchange = exchange
        self.logger = logger
        parking = ChangesFeedParking(feed)
    }

    /// Sends the entries there are now; then the feed goes on without a task until it ends.
    func start() async {
        GatewayMetrics.shared.changesFeedOpened()
        exchange.onClose { [parking] in parking.stop() }
        await pump(after: nil)
    }

    /// Runs the feed from where it stopped (after the wait ending with `outcome`) until it must wait again or ends.
    private func pump(after outcome: ChangeNotifier.WaitOutcome?) async {
        guard var feed = parking.take() else {
            // Stopped (the connection closed) while parked; otherwise another run holds the feed and goes on.
            if parking.isStopped { end() }
            return
        }
        do {
            if let outcome, feed.resume(after: outcome) == .heartbeat {
                try await exchange.write([.body(ChangesFraming.heartbeat)])
            }
            feeding: while !parking.isStopped {
                switch try await feed.step() {
                case .event(.entries(let rows)):
                    try await exchange.write([.body(ChangesFraming.lines(rows))])
                case .event(.heartbeat):
                    try await exchange.write([.body(ChangesFraming.heartbeat)])
                case .event(.caughtUp):
                    continue
                case .finished:
                    break feeding
                case .wait(let sequence, let deadline):
                    parking.park(feed, after: sequence, deadline: deadline) { [self] in await pump(after: $0) }
                    return
                }
            }
        } catch let error as GatewayError {
            logger.error("Changes feed failed", metadata: ["error": "\(error.reason)"])
        } catch {
            // The connection closed.
        }
        end()
    }

    /// Writes the response's end and closes the connection after it, once.
    private func end() {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        GatewayMetrics.shared.changesFeedClosed()
        exchange.finish(nil)
    }
}
