import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

// MARK: - PostgresChangeListener

/// Tells one node how far its `_changes` feeds may read in a ``PostgresGatewayStorage`` every node writes, so that they
/// wake for writes made anywhere, the node's own included.
///
/// A connection of its own runs `LISTEN couchette`; a commit's `NOTIFY` (payload `SCHEMA SEQUENCE`, with the
/// version of the shared settings when it changed them; sent by PostgreSQL only once the transaction committed) is
/// a prompt hint, after which the listener reads the stable sequence (``PostgresSequencer``; one read at a time, the
/// notifications arriving meanwhile answered by one more). The stable sequence and the settings' version are also
/// read every `pollInterval` as a backstop for a missed notification or a lost connection, which is then opened
/// again. Either way the handler only ever hears of sequences below which everything has committed, and feeds read
/// what is new from the tables.
final class PostgresChangeListener: Sendable {
    private let pool: PostgresConnectionPool
    private let schema: String
    private let sequencer: PostgresSequencer
    private let pollInterval: TimeAmount
    /// Called on ``callbacks``, never on an event loop: it may read the storage, which waits on one.
    private let handler: @Sendable (StorageCommit) -> Void
    private let callbacks = DispatchQueue(label: "couchette.postgres.commits")
    private struct State {
        var connection: PostgresConnection?
        var poll: RepeatedTask?
        var stopped = false
        var reconnecting = false
        /// A read of the stable sequence is running; another is due after it.
        var reading = false
        var readAgain = false
        /// The newest settings version notified and not yet reported.
        var settingsVersion: UInt64?
    }

    private let state = Mutex(State())

    init(
        pool: PostgresConnectionPool, schema: String, sequencer: PostgresSequencer, pollInterval: Duration,
        handler: @escaping @Sendable (StorageCommit) -> Void
    ) {
        self.pool = pool
        self.schema = schema
        self.sequencer = sequencer
        self.pollInterval = .nanoseconds(max(1_000_000, pollInterval.nanoseconds))
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

    /// Reads the stable sequence (connecting and listening first when there is no live connection).
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
        let tag = sequencer.tag
        let timeout = pool.timeout
        return ready.flatMap { connection in
            // Bounded: a poll that never ends would stop the polls (and the reconnection after an outage).
            PostgresLink.bounded(
                connection.query(
                    """
                    SELECT stable_sequence(\(tag)),
                        coalesce((SELECT value FROM meta WHERE key = 'settings_version'), '0')
                    """, logger: connection.logger), on: connection, within: timeout
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
        return opened.flatMap { connection in
            connection.addListener(channel: "couchette") { [weak self] _, notification in
                // `SCHEMA LAST` or `SCHEMA LAST SETTINGS` (PostgresWriteBatch, store_documents); LAST is only a hint.
                let parts = notification.payload.split(separator: " ")
                guard parts.count >= 2, parts[0] == schema else { return }
                self?.readStableSequence(settingsVersion: parts.count > 2 ? UInt64(parts[2]) : nil)
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

    /// Reads the stable sequence after a notification and reports it (with `settingsVersion`, when the commit named
    /// one); while a read runs, notifications make one more read after it.
    private func readStableSequence(settingsVersion: UInt64?) {
        let connection = state.withLock { state -> PostgresConnection? in
            if let settingsVersion { state.settingsVersion = max(state.settingsVersion ?? 0, settingsVersion) }
            guard !state.stopped, let connection = state.connection, !connection.isClosed else { return nil }
            guard !state.reading else {
                state.readAgain = true
                return nil
            }
            state.reading = true
            return connection
        }
        guard let connection else { return }
        let handler = handler
        PostgresLink.bounded(
            connection.query(sequencer.stableQuery, logger: connection.logger), on: connection, within: pool.timeout
        ).whenComplete { [weak self] result in
            guard let self else { return }
            let (settingsVersion, again) = self.state.withLock { state in
                defer {
                    state.settingsVersion = nil
                    state.readAgain = false
                    state.reading = false
                }
                return (state.settingsVersion, state.readAgain)
            }
            if case .success(let rows) = result, let row = rows.rows.first, let stable = try? row.decode(Int64.self) {
                handler(StorageCommit(sequence: UInt64(max(0, stable)), settingsVersion: settingsVersion))
            } else if let settingsVersion {
                handler(StorageCommit(sequence: 0, settingsVersion: settingsVersion))
            }
            if again { self.readStableSequence(settingsVersion: nil) }
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
