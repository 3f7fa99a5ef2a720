import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

// MARK: - PostgresConnectionPool

/// Connections to one PostgreSQL database for the calls of ``PostgresGatewayStorage``: a caller borrows a connection
/// for a statement or a transaction and waits for PostgresNIO's answers, which arrive on the pool's own event loops
/// (never the HTTP server's, so a wait cannot stall the loop it waits on). A synchronous caller blocks its thread; an
/// `async` one (``withConnection(_:)-(PostgresLink) async``) is suspended and holds none. When every connection is
/// borrowed, callers of both kinds wait in one queue, served in the order they came, each for at most the timeout.
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
    /// Tasks and threads waiting for a connection, in the order they came.
    private var waiters: [Waiter] = []
    private var nextWaiter = 0
    private var observers = 0
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
        configuration.options.connectTimeout = location.timeout.timeAmount
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
        do {
            return try connecting().wait()
        } catch {
            throw PostgresLink.translate(error)
        }
    }

    /// ``openConnection()`` holding no thread while it connects.
    private func openConnection() async throws(GatewayError) -> PostgresConnection {
        do {
            return try await connecting().get()
        } catch {
            throw PostgresLink.translate(error)
        }
    }

    /// A new connection, once connected.
    private func connecting() -> EventLoopFuture<PostgresConnection> {
        PostgresConnection.connect(
            on: Self.eventLoopGroup.next(), configuration: configuration, id: newConnectionID(), logger: logger)
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

    /// Runs `body` with a connection borrowed for the call, holding no thread while it waits for one or for
    /// PostgreSQL's answers.
    @discardableResult
    func withConnection<T>(_ body: (PostgresLink) async throws(GatewayError) -> T) async throws(GatewayError) -> T {
        let connection = try await borrow()
        do {
            let result = try await body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection)
            throw error
        }
    }

    /// Runs `body`'s statements in a new transaction, committed when it returns and rolled back when it throws,
    /// holding no thread while it waits for a connection or for PostgreSQL's answers. No view of the storage joins
    /// it (``transaction(retries:_:)-(_,(PostgresLink,Transaction)throws(GatewayError)->T)`` hands one on).
    ///
    /// - Parameter retries: How many times a transaction that PostgreSQL aborted for a deadlock or a serialization
    ///   failure runs again from the start.
    func transaction<T>(
        retries: Int = 3, _ body: (PostgresLink) async throws(GatewayError) -> T
    ) async throws(GatewayError) -> T {
        var attempt = 0
        while true {
            let connection = try await borrow()
            do throws(GatewayError) {
                try await connection.query("BEGIN")
                let result = try await body(connection)
                try await connection.query("COMMIT")
                noteCommit()
                giveBack(connection)
                return result
            } catch {
                let transient = connection.lastFailureWasTransient
                _ = try? await connection.query("ROLLBACK")
                giveBack(connection)
                attempt += 1
                guard transient, attempt <= retries else { throw error }
            }
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

    /// What a borrower gets, decided under the lock.
    private enum Claim {
        /// An idle connection.
        case connection(PostgresConnection)
        /// The right to open one (counted as open already).
        case open
        /// Nothing: every connection is borrowed (for a waiter: none came in time).
        case none
        /// Nothing ever: the pool is closed.
        case closed
        /// Nothing: the waiting task was cancelled (its client gone).
        case cancelled
    }

    /// A borrower waiting for a connection: a task (resumed when served) or a thread (woken to find what it was
    /// handed). One queue for both, served in the order they came.
    private final class Waiter {
        let id: Int
        /// The waiting task's continuation; nil for a thread.
        let continuation: CheckedContinuation<Claim, Never>?
        /// What a waiting thread was handed.
        var handed: Claim?
        /// A task's timeout, cancelled once it is served.
        var timer: Scheduled<Void>?

        init(id: Int, continuation: CheckedContinuation<Claim, Never>?) {
            self.id = id
            self.continuation = continuation
        }
    }

    /// An idle connection, or the right to open one, or nothing. Call with `condition` locked.
    private func claimLocked() -> Claim {
        if closed { return .closed }
        while let connection = idle.popLast() {
            if !connection.isClosed { return .connection(connection) }
            openCount -= 1
        }
        guard openCount < maximumConnections else { return .none }
        openCount += 1
        return .open
    }

    /// Gives `claim` to the first waiter, if any: a thread's is left for it to find, a task is returned to be resumed
    /// once the lock is released. Call with `condition` locked.
    private func serveFirstLocked(_ claim: Claim) -> (served: Bool, task: (CheckedContinuation<Claim, Never>, Claim)?) {
        guard !waiters.isEmpty else { return (false, nil) }
        let waiter = waiters.removeFirst()
        waiter.timer?.cancel()
        guard let continuation = waiter.continuation else {
            waiter.handed = claim
            condition.broadcast()
            return (true, nil)
        }
        return (true, (continuation, claim))
    }

    /// A connection for a synchronous caller, which waits (blocking its thread, counted out of its storage threads'
    /// limit: ``StorageThreads/blocking(_:)``) in turn for one to be free, for at most the timeout.
    private func borrow() throws(GatewayError) -> PostgresLink {
        condition.lock()
        var claim = claimLocked()
        if case .none = claim {
            nextWaiter += 1
            let waiter = Waiter(id: nextWaiter, continuation: nil)
            waiters.append(waiter)
            if observers > 0 { condition.broadcast() }
            let deadline = timeout.deadlineFromNow
            claim = StorageThreads.blocking { () -> Claim in
                while waiter.handed == nil {
                    if !condition.wait(until: deadline), waiter.handed == nil {
                        waiters.removeAll { $0 === waiter }
                        return .none
                    }
                }
                return waiter.handed ?? .none
            }
        }
        condition.unlock()
        return try take(claim)
    }

    /// A connection for an `async` caller, which waits (holding no thread) in turn for one to be free, for at most
    /// the timeout; a cancelled task (its client gone) leaves the queue at once, with a 503.
    private func borrow() async throws(GatewayError) -> PostgresLink {
        let id = condition.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        let claim: Claim = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                condition.lock()
                let claim = claimLocked()
                guard case .none = claim else {
                    condition.unlock()
                    continuation.resume(returning: claim)
                    return
                }
                // Cancelled before it could wait: the handler found nothing to end, so it does not wait at all.
                guard !Task.isCancelled else {
                    condition.unlock()
                    continuation.resume(returning: .cancelled)
                    return
                }
                let waiter = Waiter(id: id, continuation: continuation)
                waiters.append(waiter)
                if observers > 0 { condition.broadcast() }
                waiter.timer = Self.eventLoopGroup.next().scheduleTask(in: timeout.timeAmount) { [weak self] in
                    self?.giveUp(id, with: .none)
                }
                condition.unlock()
            }
        } onCancel: { [weak self] in
            self?.giveUp(id, with: .cancelled)
        }
        if case .open = claim {
            do {
                return link(try await openConnection())
            } catch {
                openFailed()
                throw error
            }
        }
        return try take(claim)
    }

    /// The connection a claim gives (opening one for ``Claim/open``), or why there is none.
    private func take(_ claim: Claim) throws(GatewayError) -> PostgresLink {
        switch claim {
        case .closed: throw .serviceUnavailable("The database is closed")
        case .none: throw .serviceUnavailable("PostgreSQL gave no connection within \(timeout): every one is busy")
        case .cancelled: throw .serviceUnavailable("The request was cancelled while it waited for a PostgreSQL connection")
        case .connection(let connection): return link(connection)
        case .open:
            do {
                return link(try openConnection())
            } catch {
                openFailed()
                throw error
            }
        }
    }

    /// Ends the wait of task `waiter` with `claim` (``Claim/none`` or ``Claim/cancelled``), if it still waits: its
    /// timeout passed, or it was cancelled.
    private func giveUp(_ waiter: Int, with claim: Claim) {
        let ended: Waiter? = condition.withLock {
            guard let index = waiters.firstIndex(where: { $0.id == waiter }) else { return nil }
            return waiters.remove(at: index)
        }
        ended?.timer?.cancel()
        ended?.continuation?.resume(returning: claim)
    }

    /// How many borrowers wait for a connection (for tests).
    var waitingCount: Int {
        condition.withLock { waiters.count }
    }

    /// A connection that could not be opened is not open: the first waiter may try in its place.
    private func openFailed() {
        let task: (CheckedContinuation<Claim, Never>, Claim)? = condition.withLock {
            openCount -= 1
            guard !closed, !waiters.isEmpty else { return nil }
            openCount += 1
            return serveFirstLocked(.open).task
        }
        if let (continuation, claim) = task { continuation.resume(returning: claim) }
    }

    private func link(_ connection: PostgresConnection) -> PostgresLink {
        PostgresLink(connection: connection, logger: logger, timeout: timeout)
    }

    private func newConnectionID() -> Int {
        condition.withLock {
            nextID += 1
            return nextID
        }
    }

    /// Takes a connection back: to the first waiter, else to the idle ones; a broken one is closed, and the first
    /// waiter may open one in its place.
    private func giveBack(_ link: PostgresLink) {
        let task: (CheckedContinuation<Claim, Never>, Claim)? = condition.withLock {
            let healthy = !closed && !link.isBroken && !link.connection.isClosed
            if healthy {
                let (served, task) = serveFirstLocked(.connection(link.connection))
                if served { return task }
                if idle.count < maximumIdleConnections {
                    idle.append(link.connection)
                    return nil
                }
            }
            openCount -= 1
            if !link.connection.isClosed { link.connection.closeInBackground() }
            guard !closed, !waiters.isEmpty else { return nil }
            openCount += 1
            return serveFirstLocked(.open).task
        }
        if let (continuation, claim) = task { continuation.resume(returning: claim) }
    }

    /// Blocks until `count` borrowers wait for a connection, for at most `timeout`; whether they do (for tests).
    func waitUntilTasksWait(_ count: Int, within timeout: Duration) -> Bool {
        let deadline = timeout.deadlineFromNow
        return condition.withLock {
            observers += 1
            defer { observers -= 1 }
            while waiters.count < count {
                guard condition.wait(until: deadline) else { return waiters.count >= count }
            }
            return true
        }
    }

    /// Closes idle connections and refuses later borrows (and the waiting ones); borrowed ones close when given back.
    func close() {
        let (connections, waiting) = condition.withLock {
            closed = true
            let connections = idle
            openCount -= idle.count
            idle = []
            let waiting = waiters
            waiters = []
            for waiter in waiting {
                waiter.timer?.cancel()
                waiter.handed = .closed
            }
            condition.broadcast()
            return (connections, waiting.compactMap(\.continuation))
        }
        for continuation in waiting { continuation.resume(returning: .closed) }
        for connection in connections { try? connection.closeInBackground().wait() }
    }
}
