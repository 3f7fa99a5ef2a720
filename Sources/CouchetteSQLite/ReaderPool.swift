import Foundation

// MARK: - ReaderPool

/// Read connections beside a database's writer (WAL mode), so that reads never wait for writes: each read runs in
/// a read transaction of its own on one of them and sees the last commit before it began, whole, while the writer
/// goes on. Connections open as they are first needed, up to ``limit``; a read that finds them all busy waits for
/// one. A read inside another read of the same pool on the same thread joins it (the same connection and
/// snapshot), so nested reads never wait for a second connection that other threads' reads hold.
///
/// `Reader` is what a read is given: a ``Connection``, or a type wrapping one.
///
/// ```swift
/// let readers = ReaderPool(
///     open: { try Connection(path: path, options: Connection.Options(create: false, journalMode: nil)) },
///     begin: { try $0.execute("BEGIN DEFERRED") }, end: { try? $0.execute("COMMIT") }, close: { $0.close() })
/// let count = try readers.withReader { try $0.firstValue("SELECT count(*) FROM docs") }
/// ```
public final class ReaderPool<Reader: AnyObject>: @unchecked Sendable {
    /// The most connections the pool opens.
    public let limit: Int
    private let open: () throws -> Reader
    private let begin: (Reader) throws -> Void
    private let end: (Reader) -> Void
    private let closeReader: (Reader) -> Void
    private let condition = NSCondition()
    private var idle: [Reader] = []  // guarded by `condition`
    private var opened = 0  // guarded by `condition`
    private var closed = false  // guarded by `condition`

    /// A pool that opens readers with `open`, starts and ends each read with `begin` and `end`, and closes readers
    /// with `close`; the closures are called on the threads that read, one reader on one thread at a time.
    public init(
        limit: Int = 4, open: @escaping () throws -> Reader, begin: @escaping (Reader) throws -> Void,
        end: @escaping (Reader) -> Void, close: @escaping (Reader) -> Void
    ) {
        self.limit = limit
        self.open = open
        self.begin = begin
        self.end = end
        self.closeReader = close
    }

    /// Runs `body` on a reader inside a read transaction (or inside this thread's read of the same pool); nil when
    /// the pool is closed (or closes while waiting).
    ///
    /// - Throws: What opening a connection, beginning the read or `body` throws.
    public func withReader<T>(_ body: (Reader) throws -> T) throws -> T? {
        let reads = ThreadReads.current
        let poolID = ObjectIdentifier(self)
        if let joined = reads.readers[poolID] {
            // Only this pool puts its readers under its identifier.
            return try body(unsafeDowncast(joined, to: Reader.self))
        }
        guard let reader = try checkOut() else { return nil }
        defer { checkIn(reader) }
        try begin(reader)
        reads.readers[poolID] = reader
        defer {
            reads.readers[poolID] = nil
            end(reader)
        }
        return try body(reader)
    }

    /// Closes every connection once its read ends; later reads get nil. Returns when all are closed.
    public func close() {
        condition.withLock {
            closed = true
            for reader in idle { closeReader(reader) }
            opened -= idle.count
            idle.removeAll()
            while opened > 0 { condition.wait() }
        }
    }

    private func checkOut() throws -> Reader? {
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
            return try open()
        } catch {
            condition.withLock {
                opened -= 1
                condition.broadcast()
            }
            throw error
        }
    }

    private func checkIn(_ reader: Reader) {
        condition.withLock {
            if closed {
                closeReader(reader)
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
    var readers: [ObjectIdentifier: AnyObject] = [:]

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
