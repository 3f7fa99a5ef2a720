import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

// MARK: - PostgresConnectionPool

/// Connections to one PostgreSQL database for the synchronous ``GatewayStorage`` calls of
/// ``PostgresGatewayStorage``: a caller borrows a connection for a statement or a transaction and waits for
/// PostgresNIO's answers, which arrive on the pool's own event loops (never the HTTP server's, so a wait cannot
/// stall the loop it waits on).
///
/// A transaction is a value (``Transaction``) its body receives: storage calls made inside it (an update's
/// transform storing attachments, a batch's updates) join it through a view of the storage bound to it
/// (``PostgresGatewayStorage``), never by looking up the calling thread.
final class PostgresConnectionPool: @unchecked Sendable {
    /// The event loops of every pool's connections.
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    private let configuration: PostgresConnection.Configuration
    /// How long to wait for a connection or an answer (``PostgresLocation/timeout``).
    let timeout: Duration
    private let logger: Logger
    private let maximumConnections: Int
    /// Connections given back beyond this many idle ones are closed.
    private let maximumIdleConnections = 4
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var idle: [PostgresConnection] = []
    private var openCount = 0
    private var nextID = 0
    private var closed = false
    private let commits = Atomic<UInt64>(0)

    /// An open transaction and what storage code keeps with it until it ends. Whoever holds it runs statements in
    /// the transaction, from any thread (one at a time: a connection answers statements in order).
    final class Transaction: @unchecked Sendable {
        private let link: PostgresLink
        /// Storage-specific state (a batch's pending rows), dropped with the transaction.
        var state: AnyObject?
        private let ended = Atomic<Bool>(false)

        init(connection: PostgresLink) { self.link = connection }

        /// The transaction's connection.
        ///
        /// - Throws: 500 once the transaction has committed or rolled back: a view of the storage kept past its
        ///   body must not write outside it.
        var connection: PostgresLink {
            get throws(GatewayError) {
                guard !ended.load(ordering: .acquiring) else {
                    throw .internalError("A storage transaction was used after it ended")
                }
                return link
            }
        }

        /// Marks the transaction ended (committed or rolled back).
        func end() {
            state = nil
            ended.store(true, ordering: .releasing)
        }
    }

    /// Creates a pool; connections open when first needed.
    ///
    /// - Parameters:
    ///   - location: The server and database.
    ///   - searchPath: The schema unqualified table names resolve in.
    ///   - maximumConnections: At most this many connections are open; further callers wait for one.
    /// - Throws: 500 when the TLS settings cannot be used (an unreadable `sslrootcert`).
    init(location: PostgresLocation, searchPath: String, maximumConnections: Int) throws(GatewayError) {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: try Self.tls(for: location))
        // The application name tells operators (pg_stat_activity) which gateway process holds a connection.
        configuration.options.additionalStartupParameters = [
            ("search_path", PostgresLink.quoted(searchPath)),
            ("application_name", "couchette-gateway \(ProcessInfo.processInfo.processIdentifier)"),
        ]
        let (seconds, attoseconds) = location.timeout.components
        configuration.options.connectTimeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        self.configuration = configuration
        self.timeout = location.timeout
        self.maximumConnections = maximumConnections
        var logger = Logger(label: "couchette.postgres")
        logger.logLevel = .critical
        self.logger = logger
    }

    /// PostgresNIO's TLS setting for the location's `sslmode` (see ``PostgresLocation/TLSMode``).
    static func tls(for location: PostgresLocation) throws(GatewayError) -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch location.tlsMode {
        case .disable: return .disable
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let path = location.rootCertificatesPath { tls.trustRoots = .file(path) }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw .internalError("PostgreSQL TLS settings cannot be used (sslrootcert \(location.rootCertificatesPath ?? "-")): \(error)")
        }
        return location.tlsMode == .prefer ? .prefer(context) : .require(context)
    }

    deinit {
        // PostgresNIO requires connections closed (not only closing) before they go away.
        for connection in idle { try? connection.closeInBackground().wait() }
    }

    // MARK: - Connections

    /// Opens a connection outside the pool (a listener's), which the caller closes.
    func openConnection() throws(GatewayError) -> PostgresConnection {
        let id = condition.withLock {
            nextID += 1
            return nextID
        }
        do {
            return try PostgresConnection.connect(
                on: Self.eventLoopGroup.next(), configuration: configuration, id: id, logger: logger
            ).wait()
        } catch {
            throw PostgresLink.translate(error)
        }
    }

    /// Runs `body` with a connection borrowed for the call.
    @discardableResult
    func withConnection<T>(_ body: (PostgresLink) throws(GatewayError) -> T) throws(GatewayError) -> T {
        let connection = try borrow()
        do {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection)
            throw error
        }
    }

    /// Runs `body` in a new transaction, committed when it returns and rolled back when it throws. `body` gets the
    /// transaction as a value, to hand on to whatever must join it.
    ///
    /// - Parameter retries: How many times a transaction that PostgreSQL aborted for a deadlock or a serialization
    ///   failure runs again from the start.
    func transaction<T>(
        retries: Int = 3, _ body: (PostgresLink, Transaction) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        var attempt = 0
        while true {
            let connection = try borrow()
            let transaction = Transaction(connection: connection)
            do throws(GatewayError) {
                try connection.execute("BEGIN")
                let result: T
                do throws(GatewayError) {
                    result = try body(connection, transaction)
                } catch {
                    transaction.end()
                    throw error
                }
                // Ended before the connection can go back to the pool: a view kept past the body must find it
                // ended, not use a connection another borrower may hold.
                transaction.end()
                try connection.execute("COMMIT")
                noteCommit()
                giveBack(connection)
                return result
            } catch {
                let transient = connection.lastFailureWasTransient
                try? connection.execute("ROLLBACK")
                giveBack(connection)
                attempt += 1
                guard transient, attempt <= retries else { throw error }
            }
        }
    }

    /// How many commits this process knows of: its own transactions', and those ``noteCommit()`` is told of (other
    /// nodes' notifications). Read before a query, it tells whether a commit could have come after the query began
    /// (``PostgresFeedReads``).
    var commitCount: UInt64 { commits.load(ordering: .acquiring) }

    /// Counts a commit: called after each of this process's `COMMIT`s and before anything it wakes runs.
    func noteCommit() {
        commits.add(1, ordering: .releasing)
    }

    private func borrow() throws(GatewayError) -> PostgresLink {
        let (seconds, attoseconds) = timeout.components
        let deadline = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw .serviceUnavailable("The database is closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                if connection.isClosed {
                    condition.withLock { openCount -= 1 }
                    condition.lock()
                    continue
                }
                return PostgresLink(connection: connection, logger: logger, timeout: timeout)
            }
            if openCount < maximumConnections {
                openCount += 1
                condition.unlock()
                do {
                    return PostgresLink(connection: try openConnection(), logger: logger, timeout: timeout)
                } catch {
                    condition.withLock {
                        openCount -= 1
                        condition.signal()
                    }
                    throw error
                }
            }
            guard condition.wait(until: deadline) || Date() < deadline else {
                condition.unlock()
                throw .serviceUnavailable("PostgreSQL gave no connection within \(timeout): every one is busy")
            }
        }
    }

    private func giveBack(_ link: PostgresLink) {
        condition.withLock {
            if closed || link.isBroken || link.connection.isClosed || idle.count >= maximumIdleConnections {
                openCount -= 1
                if !link.connection.isClosed { link.connection.closeInBackground() }
            } else {
                idle.append(link.connection)
            }
            condition.signal()
        }
    }

    /// Closes idle connections and refuses later borrows; borrowed ones close when given back.
    func close() {
        let connections = condition.withLock {
            closed = true
            let connections = idle
            openCount -= idle.count
            idle = []
            condition.broadcast()
            return connections
        }
        for connection in connections { try? connection.closeInBackground().wait() }
    }
}
