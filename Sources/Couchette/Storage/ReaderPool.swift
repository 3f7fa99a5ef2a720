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
        let threadKey = self.threadKey
        let thread = Thread.current
        if let joined = thread.threadDictionary[threadKey] as? DatabaseStorage {
            return try joined.run { try body(joined) }
        }
        guard let reader = try checkOut() else { return nil }
        defer { checkIn(reader) }
        return try reader.run {
            try reader.beginRead()
            thread.threadDictionary[threadKey] = reader
            defer {
                thread.threadDictionary[threadKey] = nil
                reader.endRead()
            }
            return try body(reader)
        }
    }

    /// Where a thread keeps the reader its read in progress holds.
    private var threadKey: String { "couchette.reader.\(UInt(bitPattern: ObjectIdentifier(self).hashValue))" }

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
