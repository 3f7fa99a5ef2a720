import Foundation
import Logging
import NIOCore
import PostgresNIO

// MARK: - PostgresLink

/// One borrowed PostgreSQL connection: each call sends a statement and waits for its result, blocking the calling
/// thread (the synchronous storage calls) or suspending the calling task (`async`: no thread held). Errors become
/// ``GatewayError``s here, in one place: a lost or refused connection is 503, anything else 500 naming PostgreSQL's
/// message.
final class PostgresLink: @unchecked Sendable {
    let connection: PostgresConnection
    private let logger: Logger
    /// How long a statement's answer may take (``PostgresLocation/timeout``).
    private let timeout: Duration
    /// Whether the last statement failed for a deadlock or a serialization failure (worth running again).
    private(set) var lastFailureWasTransient = false
    /// Whether a wait on this connection timed out: it is closing (PostgresNIO's close waits for the server), and
    /// must not go back to the pool.
    private(set) var isBroken = false

    init(connection: PostgresConnection, logger: Logger, timeout: Duration) {
        self.connection = connection
        self.logger = logger
        self.timeout = timeout
    }

    /// Runs a statement and returns its rows.
    ///
    /// - Throws: 503 when PostgreSQL does not answer within the timeout (the connection is closed: its state is
    ///   unknown).
    @discardableResult
    func query(_ query: PostgresQuery) throws(GatewayError) -> PostgresQueryResult {
        lastFailureWasTransient = false
        let answer = Self.bounded(connection.query(query, logger: logger), on: connection, within: timeout)
        do {
            return try answer.wait()
        } catch {
            throw failure(error)
        }
    }

    /// Runs a statement and returns its rows, holding no thread while PostgreSQL answers.
    ///
    /// - Throws: 503 when PostgreSQL does not answer within the timeout (the connection is closed: its state is
    ///   unknown).
    @discardableResult
    func query(_ query: PostgresQuery) async throws(GatewayError) -> PostgresQueryResult {
        lastFailureWasTransient = false
        let answer = Self.bounded(connection.query(query, logger: logger), on: connection, within: timeout)
        do {
            return try await answer.get()
        } catch {
            throw failure(error)
        }
    }

    /// The gateway's error for a statement's failure, noting whether the connection is broken (a wait timed out) or
    /// the failure worth running the transaction again for.
    private func failure(_ error: any Error) -> GatewayError {
        if let error = error as? TimedOut {
            isBroken = true
            return .serviceUnavailable("PostgreSQL did not answer within \(error.timeout)")
        }
        lastFailureWasTransient = Self.isTransient(error)
        return Self.translate(error)
    }

    /// What a wait on PostgreSQL that took too long fails with.
    struct TimedOut: Error {
        let timeout: Duration
    }

    /// `future`, failed with ``TimedOut`` and `connection` closed if it has not completed within `timeout`.
    static func bounded<T: Sendable>(_ future: EventLoopFuture<T>, on connection: PostgresConnection, within timeout: Duration)
        -> EventLoopFuture<T>
    {
        let loop = future.eventLoop
        let promise = loop.makePromise(of: T.self)
        let timer = loop.scheduleTask(in: timeout.timeAmount) {
            promise.fail(TimedOut(timeout: timeout))
            connection.closeInBackground()
        }
        future.whenComplete { result in
            timer.cancel()
            promise.completeWith(result)
        }
        return promise.futureResult
    }

    /// Marks the transaction's failure as worth running again (a conflict found by the storage, not by PostgreSQL).
    func noteTransientFailure() {
        lastFailureWasTransient = true
    }

    /// Runs a statement without parameters.
    func execute(_ sql: String) throws(GatewayError) {
        try query(PostgresQuery(unsafeSQL: sql))
    }

    /// Runs a query of one text column and returns its values.
    func strings(_ query: PostgresQuery) throws(GatewayError) -> [String] {
        var values: [String] = []
        for row in try self.query(query).rows { values.append(try Self.decode(row, as: String.self)) }
        return values
    }

    /// ``strings(_:)-(PostgresQuery)``, holding no thread while PostgreSQL answers.
    func strings(_ query: PostgresQuery) async throws(GatewayError) -> [String] {
        var values: [String] = []
        for row in try await self.query(query).rows { values.append(try Self.decode(row, as: String.self)) }
        return values
    }

    /// Runs a statement and returns how many rows it changed.
    func rowsChanged(by query: PostgresQuery) throws(GatewayError) -> Int {
        try self.query(query).metadata.rows ?? 0
    }

    /// Decodes a row's one column, translating a type mismatch into a 500.
    static func decode<T: PostgresDecodable>(_ row: PostgresRow, as type: T.Type) throws(GatewayError) -> T {
        do { return try row.decode(type) } catch {
            throw .internalError("PostgreSQL storage: unexpected column type (\(String(describing: error)))")
        }
    }

    /// Decodes a row's columns, translating a type mismatch into a 500.
    static func decode<each T: PostgresDecodable>(_ row: PostgresRow, as type: (repeat each T).Type)
        throws(GatewayError) -> (repeat each T)
    {
        do { return try row.decode(type) } catch {
            throw .internalError("PostgreSQL storage: unexpected column types (\(String(describing: error)))")
        }
    }

    // MARK: - Errors

    /// The SQLSTATE of a server error.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Deadlocks (40P01) and serialization failures (40001), after which a transaction may succeed when run again.
    static func isTransient(_ error: any Error) -> Bool {
        ["40001", "40P01"].contains(sqlState(of: error) ?? "")
    }

    /// The gateway's error for a PostgreSQL failure.
    static func translate(_ error: any Error) -> GatewayError {
        if let error = error as? GatewayError { return error }
        guard let error = error as? PSQLError else { return .serviceUnavailable("PostgreSQL is unavailable: \(error)") }
        if let message = error.serverInfo?[.message] {
            let state = error.serverInfo?[.sqlState] ?? ""
            // A full disk is 507, as SQLite's (SQLiteError.status); connection exceptions (08), operator
            // intervention (57: shutdown) and other insufficient resources (53) are 503: the client may retry.
            if state == "53100" { return GatewayError(statusCode: 507, reason: "The disk is full: \(message)") }
            if ["08", "57", "53"].contains(String(state.prefix(2))) {
                return .serviceUnavailable("PostgreSQL is unavailable: \(message)")
            }
            return .internalError("PostgreSQL storage error \(state): \(message)")
        }
        return .serviceUnavailable("PostgreSQL is unavailable (\(error.code))")
    }

    /// `name` as a quoted SQL identifier.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

// MARK: - Bytes

extension ByteBuffer {
    /// The readable bytes.
    var bytes: [UInt8] { Array(readableBytesView) }
}

extension Array where Element == UInt8 {
    /// The bytes in a buffer, for a `bytea` parameter.
    var byteBuffer: ByteBuffer { ByteBuffer(bytes: self) }
}

extension PostgresConnection {
    /// Starts closing the connection (the future-based `close`, not the `async` one), keeping it alive until it is
    /// closed: PostgresNIO requires connections closed, not only closing, before they go away.
    @discardableResult
    func closeInBackground() -> EventLoopFuture<Void> {
        let closing: EventLoopFuture<Void> = close()
        closing.whenComplete { _ in withExtendedLifetime(self) {} }
        return closing
    }
}
