import CouchetteSQLite
import Foundation

/// Read connections beside a database's writer (WAL mode), so that reads never wait for writes: each read runs in
/// a read transaction of its own on one of them and sees the last commit before it began, whole, while the writer
/// goes on. Connections open as they are first needed, up to ``limit``; a read that finds them all busy waits for
/// one.
final class ReaderPool: @unchecked Sendable {
    /// The most connections the pool opens.
    let limit: Int
    private let path: String
    private let options: StorageOptions
    private let condition = NSCondition()
    private var idle: [DatabaseStorage] = []  // guarded by `condition`
    private var opened = 0  // guarded by `condition`
    private var closed = false  // guarded by `condition`

    init(path: String, options: StorageOptions, limit: Int = 4) {
        self.path = path
        self.options = options
        self.limit = limit
    }

    /// Runs `body` on a reader inside a read transaction; nil when the pool is closed (or closes while waiting).
    ///
    /// - Throws: What opening a connection or `body` throws, as ``CouchetteError``.
    /// A read inside another read on the same thread joins it (the same connection and snapshot), so nested reads
    /// never wait for a second connection that other threads' reads hold.
    func withReader<T>(_ body: (DatabaseStorage) throws -> T) throws(CouchetteError) -> T? {
        let reads = ThreadReads.current
        let poolID = ObjectIdentifier(self)
        if let joined = reads.readers[poolID] {
            return try joined.run { try body(joined) }
        }
        guard let reader = try checkOut() else { return nil }
        defer { checkIn(reader) }
        return try reader.run {
            try reader.beginRead()
            reads.readers[poolID] = reader
            defer {
                reads.readers[poolID] = nil
                reader.endRead()
            }
            return try body(reader)
        }
    }

    /// Closes every connection once its read ends; later reads get nil. Returns when all are closed.
    func close() {
        condition.withLock {
            closed = true
            for reader in idle { reader.close() }
            opened -= idle.count
            idle.removeAll()
            while opened > 0 { condition.wait() }
        }
    }

    private func checkOut() throws(CouchetteError) -> DatabaseStorage? {
        condition.lock()
        while !closed && idle.isEmpty && opened >= limit { condition.wait() }
        if closed {
            condition.unlock()
            return nil
        }
        if let reader = idle.popLast() {
            condition.unlock()
            return reader
        }
        opened += 1
        condition.unlock()
        do {
            return try DatabaseStorage(readerOf: path, options: options)
        } catch {
            condition.withLock {
                opened -= 1
                condition.broadcast()
            }
            throw DatabaseStorage.translate(error)
        }
    }

    private func checkIn(_ reader: DatabaseStorage) {
        condition.withLock {
            if closed {
                reader.close()
                opened -= 1
            } else {
                idle.append(reader)
            }
            condition.broadcast()
        }
    }
}

/// The readers a thread's reads in progress hold, by pool: a read inside another read of the same pool joins it.
/// Kept in a thread-specific value (`Thread.threadDictionary` bridges its keys and values on every access).
private final class ThreadReads {
    var readers: [ObjectIdentifier: DatabaseStorage] = [:]

    /// The current thread's, made on first use and released when the thread ends.
    static var current: ThreadReads {
        if let pointer = pthread_getspecific(key) { return Unmanaged<ThreadReads>.fromOpaque(pointer).takeUnretainedValue() }
        let reads = ThreadReads()
        pthread_setspecific(key, Unmanaged.passRetained(reads).toOpaque())
        return reads
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<ThreadReads>.fromOpaque(pointer).release() }
        }
        precondition(status == 0, "pthread_key_create failed (\(status))")
        return key
    }()
}
