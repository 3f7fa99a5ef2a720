import Foundation

/// A value guarded by an `NSLock`.
///
/// `Synchronization.Mutex` would do, but it needs macOS 15 and the package supports macOS 14.
final class LoggingLock<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Wraps `value`.
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
