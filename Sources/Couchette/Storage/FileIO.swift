import CouchetteCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one place where Couchette calls POSIX file functions (blobs, key changes, key files): every failing call turns
/// its `errno` into a ``CouchetteError`` here (`ENOENT` → `.notFound`, anything else → `.io`).
///
/// Messages name the file (its last path component, a digest or a temporary name), never its content.
enum FileIO {
    /// The size of the chunks in which streams and files are copied.
    static let chunkSize = 64 * 1024

    // MARK: - Descriptors

    /// Opens `path` for reading.
    static func openForReading(_ path: String) throws(CouchetteError) -> Int32 {
        try check(retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }, "open", path)
    }

    /// Creates `path`, which must not exist yet, for writing.
    static func createExclusive(_ path: String) throws(CouchetteError) -> Int32 {
        try check(retryingOnInterrupt { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }, "create", path)
    }

    /// Reads up to `buffer.count` bytes; returns 0 at end of file.
    static func readChunk(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String)
        throws(CouchetteError) -> Int
    {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = read(descriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw error(errno, "read", path)
        }
    }

    /// Reads until `buffer` is full or the file ends; returns the number of bytes read (short only at the end).
    static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String)
        throws(CouchetteError) -> Int
    {
        var total = 0
        while total < buffer.count {
            let count = try readChunk(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]), path: path)
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Reads until `data` is full or the file ends; returns the number of bytes read.
    static func readFully(_ descriptor: Int32, into data: inout Data, path: String) throws(CouchetteError) -> Int {
        try data.withUnsafeMutableBytes { buffer in
            Result { () throws(CouchetteError) in try readFully(descriptor, into: buffer, path: path) }
        }.get()
    }

    /// Writes all of `data`.
    static func writeAll(_ descriptor: Int32, _ data: Data, path: String) throws(CouchetteError) {
        try data.withUnsafeBytes { bytes in
            Result { () throws(CouchetteError) in try writeAll(descriptor, bytes, path: path) }
        }.get()
    }

    /// The size of an open file.
    static func size(of descriptor: Int32, path: String) throws(CouchetteError) -> UInt64 {
        var info = stat()
        _ = try check(fstat(descriptor, &info), "stat", path)
        return UInt64(max(0, info.st_size))
    }

    /// Writes all of `bytes`.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(CouchetteError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(descriptor, next, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw error(errno, "write", path)
            }
            next += written
            remaining -= written
        }
    }

    /// Flushes the file's data to the storage device.
    static func synchronize(_ descriptor: Int32, path: String) throws(CouchetteError) {
        _ = try check(retryingOnInterrupt { fsync(descriptor) }, "fsync", path)
    }

    /// Closes a descriptor; errors are ignored (the data was already flushed when it mattered).
    static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// Flushes a directory's entries (a rename into it) to the storage device. Best effort: some file
    /// systems refuse `fsync` on directories, and the file itself was already flushed.
    static func synchronizeDirectory(_ path: String) {
        let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }

    // MARK: - Paths

    /// Flushes a whole file to the storage device.
    static func synchronizeFile(_ path: String) throws(CouchetteError) {
        let descriptor = try openForReading(path)
        defer { closeDescriptor(descriptor) }
        try synchronize(descriptor, path: path)
    }

    /// Atomically renames `source` to `destination`, replacing it if it exists.
    static func renameFile(_ source: String, to destination: String) throws(CouchetteError) {
        _ = try check(rename(source, destination), "rename", source)
    }

    /// Removes a file; returns `false` when it did not exist.
    @discardableResult
    static func removeFile(_ path: String) throws(CouchetteError) -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw error(errno, "remove", path)
    }

    /// What `stat` says about a path: `nil` when it does not exist.
    static func fileInfo(_ path: String) throws(CouchetteError) -> (isRegularFile: Bool, size: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw error(errno, "stat", path)
        }
        let isRegular = (info.st_mode & S_IFMT) == S_IFREG
        return (isRegular, UInt64(max(0, info.st_size)))
    }

    /// Whether the current process may read `path`.
    static func isReadable(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }

    // MARK: - Errors

    private static func retryingOnInterrupt(_ call: () -> Int32) -> Int32 {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    private static func check(_ result: Int32, _ operation: String, _ path: String) throws(CouchetteError) -> Int32 {
        guard result < 0 else { return result }
        throw error(errno, operation, path)
    }

    /// The error for a failed call: `.notFound` for `ENOENT`, `.io` otherwise.
    static func error(_ code: Int32, _ operation: String, _ path: String) -> CouchetteError {
        let name = (path as NSString).lastPathComponent
        let reason = String(cString: strerror(code))
        let kind: CouchetteError.Code = code == ENOENT ? .notFound : .io
        return CouchetteError(kind, message: "Cannot \(operation) blob file \(name): \(reason)")
    }
}
