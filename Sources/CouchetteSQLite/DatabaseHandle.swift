import CSQLite
import Foundation

/// The `sqlite3*` handle of a ``Connection`` and the lock that serialises its use.
///
/// Statements keep this object, not their connection, so that the connection's statement cache
/// makes no reference cycle. After ``close()`` the pointer is `nil` and every use throws
/// ``SQLiteError/connectionClosed(sql:)``.
final class DatabaseHandle: @unchecked Sendable {
    // MARK: - State (guarded by `lock`)

    /// Recursive, so that transaction bodies and row callbacks can call back into the
    /// connection on the same thread.
    private let lock = NSRecursiveLock()
    private var pointer: OpaquePointer?

    // MARK: - Life cycle

    /// Wraps an open handle.
    ///
    /// - Parameters:
    ///   - pointer: The handle returned by `sqlite3_open_v2`.
    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        // Normally closed by Connection; sqlite3_close_v2 defers if statements remain.
        if let pointer {
            sqlite3_close_v2(pointer)
        }
    }

    /// Whether ``close()`` has not run yet.
    var isOpen: Bool {
        withLock { pointer != nil }
    }

    /// Closes the handle with `sqlite3_close_v2`; later calls do nothing.
    ///
    /// Statements that are still unfinalized keep SQLite's memory alive until their own
    /// `deinit` finalizes them; they can no longer run.
    func close() {
        withLock {
            guard let pointer else { return }
            self.pointer = nil
            // sqlite3_close_v2 only fails for an invalid handle, which cannot happen here.
            _ = try? SQLiteError.check(sqlite3_close_v2(pointer), database: nil)
        }
    }

    // MARK: - Access

    /// Runs `body` while holding the lock.
    ///
    /// - Parameters:
    ///   - body: The work to serialise.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @inline(__always)
    @discardableResult
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Runs `body` with the open handle, while holding the lock.
    ///
    /// - Parameters:
    ///   - sql: The SQL about to run, for the error message.
    ///   - body: The work to do with the `sqlite3*` handle.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError/connectionClosed(sql:)`` after ``close()``, or what `body` throws.
    @inline(__always)
    @discardableResult
    func withOpenHandle<T>(sql: String? = nil, _ body: (OpaquePointer) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let pointer else { throw SQLiteError.connectionClosed(sql: sql) }
        return try body(pointer)
    }
}
