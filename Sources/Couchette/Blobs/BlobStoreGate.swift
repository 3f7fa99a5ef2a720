import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A readers–writer lock around a blob store's files: reads and writes of single bodies share it; a key change,
/// which re-encrypts every body into a new folder and swaps it in, holds it alone, so no body is written into the
/// old folder after it was copied and no reader opens a file while the folders are swapped.
final class BlobStoreGate: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` sharing the gate with other reads and writes.
    func shared<Result, Failure>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` with the gate to itself.
    func exclusive<Result, Failure>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
