import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

// MARK: - PostgresChangeListener

/// Tells one node of the sequences every node commits to a ``PostgresGatewayStorage``, so that its `_changes` feeds
/// wake for writes made elsewhere.
///
/// A connection of its own runs `LISTEN couchette`; a commit's `NOTIFY` (payload `SCHEMA SEQUENCE`, with the
/// version of the shared settings when it changed them; sent by PostgreSQL only once the transaction committed) is
/// a prompt hint. The counter row and the settings' version are also read every `pollInterval` as a backstop for a missed notification or a lost connection, which is then opened again. Either
/// way the handler only ever hears of committed sequences, and feeds read what is new from the tables.
final class PostgresChangeListener: Sendable {
    private let pool: PostgresConnectionPool
    private let schema: String
    private let pollInterval: TimeAmount
    /// Called on ``callbacks``, never on an event loop: it may read the storage, which waits on one.
    private let handler: @Sendable (StorageCommit) -> Void
    private let callbacks = DispatchQueue(label: "couchette.postgres.commits")
    private struct State {
        var connection: PostgresConnection?
        var poll: RepeatedTask?
        var stopped = false
        var reconnecting = false
    }

    private let state = Mutex(State())

    init(
        pool: PostgresConnectionPool, schema: String, pollInterval: Duration,
        handler: @escaping @Sendable (StorageCommit) -> Void
    ) {
        self.pool = pool
        self.schema = schema
        let (seconds, attoseconds) = pollInterval.components
        self.pollInterval = .nanoseconds(max(1_000_000, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        let callbacks = callbacks
        self.handler = { commit in callbacks.async { handler(commit) } }
    }

    /// Connects and starts listening and polling; a failed connection is retried at the next poll.
    func start() {
        let loop = PostgresConnectionPool.eventLoopGroup.next()
        let poll = loop.scheduleRepeatedAsyncTask(initialDelay: .zero, delay: pollInterval) { [weak self] _ in
            guard let self else { return loop.makeSucceededVoidFuture() }
            return self.pollOnce(on: loop)
        }
        state.withLock { $0.poll = poll }
    }

    /// Stops polling and closes the connection.
    func stop() {
        let (connection, poll) = state.withLock { state in
            state.stopped = true
            defer {
                state.connection = nil
                state.poll = nil
            }
            return (state.connection, state.poll)
        }
        poll?.cancel()
        connection?.closeInBackground()
    }

    /// Reads the counter (connecting and listening first when there is no live connection).
    private func pollOnce(on loop: any EventLoop) -> EventLoopFuture<Void> {
        let connection = state.withLock { state -> PostgresConnection? in
            guard !state.stopped else { return nil }
            return state.connection.flatMap { $0.isClosed ? nil : $0 }
        }
        let ready: EventLoopFuture<PostgresConnection>
        if let connection {
            ready = loop.makeSucceededFuture(connection)
        } else {
            ready = connect(on: loop)
        }
        let handler = handler
        return ready.flatMap { connection in
            connection.query(
                """
                SELECT c.last, coalesce((SELECT value FROM meta WHERE key = 'settings_version'), '0')
                FROM counter c WHERE c.id = 1
                """, logger: connection.logger
            ).map { result in
                guard let row = result.rows.first, let (last, settings) = try? row.decode((Int64, String).self) else {
                    return
                }
                handler(StorageCommit(sequence: UInt64(last), settingsVersion: UInt64(settings) ?? 0))
            }
        }.recover { _ in }
    }

    private func connect(on loop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        let opened: EventLoopFuture<PostgresConnection> = loop.submit { () throws -> Void in }.flatMap { [pool] in
            // Opening blocks on its own event loop's answer: do it on a thread of its own, off every event loop and
            // off the few threads Swift's tasks and Dispatch's global queues share.
            let promise = loop.makePromise(of: PostgresConnection.self)
            Thread {
                do { promise.succeed(try pool.openConnection()) } catch { promise.fail(error) }
            }.start()
            return promise.futureResult
        }
        let schema = schema
        let handler = handler
        return opened.flatMap { connection in
            connection.addListener(channel: "couchette") { _, notification in
                // `SCHEMA LAST` or `SCHEMA LAST SETTINGS` (PostgresWriteBatch).
                let parts = notification.payload.split(separator: " ")
                guard parts.count >= 2, parts[0] == schema, let sequence = UInt64(parts[1]) else { return }
                handler(StorageCommit(sequence: sequence, settingsVersion: parts.count > 2 ? UInt64(parts[2]) : nil))
            }
            return connection.query("LISTEN couchette", logger: connection.logger).map { _ in
                let keep = self.state.withLock { state -> Bool in
                    guard !state.stopped else { return false }
                    state.connection = connection
                    return true
                }
                if !keep { connection.closeInBackground() }
                return connection
            }
        }
    }

    // MARK: - Slot

    /// Where a storage keeps its listener, once one is started.
    final class Slot: Sendable {
        private let listener = Mutex<PostgresChangeListener?>(nil)

        /// Starts `listener`, stopping the one before.
        func start(_ listener: PostgresChangeListener) {
            let previous = self.listener.withLock { slot in
                defer { slot = listener }
                return slot
            }
            previous?.stop()
            listener.start()
        }

        /// Stops the listener.
        func stop() {
            listener.withLock { slot in
                defer { slot = nil }
                return slot
            }?.stop()
        }
    }
}
