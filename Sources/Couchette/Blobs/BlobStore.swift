import CouchetteCore
import Foundation
import Synchronization

/// A content-addressed store of blob bodies in one directory (a database keeps it at
/// `NAME.couchette/Attachments/`).
///
/// Each body is stored once, in a file named by its SHA-1 digest in lowercase hex plus `.blob`
/// (`aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d.blob` for `"hello"`). Writes go to a temporary file in the same
/// directory (`tmp-<UUID>.blobtmp`), hashed as they are written, flushed with `fsync`, then renamed atomically
/// to the digest's name; a reader therefore never sees a partial body. Streams and files are copied in
/// 64 KiB chunks and never held in memory whole.
///
/// The store is keyed by SHA-1 only. A digest of another algorithm (`md5-…` from a CouchDB peer) is never
/// found: ``contains(_:)`` returns `false`, ``fileURL(for:)`` returns `nil`. Such a digest can still be
/// *verified* on write (``write(data:expectedDigest:)``), which then returns the content's SHA-1.
///
/// The store of an encrypted database is encrypted too (``cipher``): each file is in the format of ``BlobCipher``
/// (AES-256-GCM in 64 KiB chunks, a key of its own per file, derived from the database's key), still named by the
/// SHA-1 of the plaintext; reads release a chunk only once it verifies and check the digest at the end.
///
/// Thread-safe: the only mutable state is the cipher (swapped by a key change), and files only appear by atomic
/// rename.
///
/// ```swift
/// let store = try BlobStore(directory: dbDirectory.appending(path: "Attachments"))
/// let (digest, length) = try store.write(data: Data("hello".utf8))   // sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=, 5
/// try store.data(for: digest)                                         // "hello"
/// ```
final class BlobStore: Sendable {
    /// The extension of stored bodies' file names.
    static let fileExtension = "blob"

    /// The store's directory.
    let directory: URL
    private let directoryPath: String
    private let currentCipher: Mutex<BlobCipher?>
    /// Shared by reads and writes of single bodies; held alone by a key change (``BlobStoreGate``).
    let gate = BlobStoreGate()

    /// Opens the store in `directory`, creating the directory (and its parents) if needed.
    ///
    /// - Parameter cipher: The cipher of an encrypted store; nil for plain files.
    /// - Throws: ``CouchetteError`` `.io` when the directory cannot be created or a file is in the way.
    init(directory: URL, cipher: BlobCipher? = nil) throws {
        currentCipher = Mutex(cipher)
        guard directory.isFileURL else {
            throw CouchetteError(.badInput, message: "A blob store needs a file URL")
        }
        self.directory = directory.standardizedFileURL
        directoryPath = self.directory.path
        do {
            try FileManager.default.createDirectory(
                at: self.directory, withIntermediateDirectories: true, attributes: nil)
        } catch {
            throw CouchetteError(
                .io, message: "Cannot create the blob directory \(self.directory.lastPathComponent): \(error)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directoryPath, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw CouchetteError(.io, message: "The blob directory \(self.directory.lastPathComponent) is not a directory")
        }
    }

    /// The cipher files are written and read with; nil for a plain store.
    var cipher: BlobCipher? {
        get { currentCipher.withLock { $0 } }
        set { currentCipher.withLock { $0 = newValue } }
    }

    // MARK: - Lookups

    /// The file that holds the body with `digest` (encrypted in an encrypted store), whether or not it exists; `nil`
    /// for a digest that is not SHA-1.
    func fileURL(for digest: AttachmentDigest) -> URL? {
        path(for: digest).map { URL(fileURLWithPath: $0, isDirectory: false) }
    }

    /// Whether the body with `digest` is stored. Always `false` for a digest that is not SHA-1.
    func contains(_ digest: AttachmentDigest) -> Bool {
        length(of: digest) != nil
    }

    /// The length in bytes of the body with `digest`, or `nil` when it is not stored.
    func length(of digest: AttachmentDigest) -> UInt64? {
        gate.shared { ungatedLength(of: digest) }
    }

    /// ``length(of:)`` without the gate.
    func ungatedLength(of digest: AttachmentDigest) -> UInt64? {
        guard let path = path(for: digest), let info = try? FileIO.fileInfo(path), info.isRegularFile else {
            return nil
        }
        guard cipher != nil else { return info.size }
        guard let descriptor = try? FileIO.openForReading(path) else { return nil }
        defer { FileIO.closeDescriptor(descriptor) }
        var start = [UInt8](repeating: 0, count: 8)
        guard (try? start.withUnsafeMutableBytes { try FileIO.readFully(descriptor, into: $0, path: path) }) == 8 else {
            return nil
        }
        return BlobReader.plaintextLength(fileSize: info.size, chunkSizeLog2: start[6])
    }

    /// A reader of the content of the body with `digest`, piece by piece, checked as it goes.
    ///
    /// - Throws: ``CouchetteError`` `.notFound` when it is not stored; what ``BlobReader/init(path:digest:cipher:)``
    ///   throws.
    func reader(for digest: AttachmentDigest) throws(CouchetteError) -> BlobReader {
        try gate.shared { () throws(CouchetteError) in try ungatedReader(for: digest) }
    }

    /// ``reader(for:)`` without the gate.
    func ungatedReader(for digest: AttachmentDigest) throws(CouchetteError) -> BlobReader {
        guard let path = path(for: digest), let info = try FileIO.fileInfo(path), info.isRegularFile else {
            throw CouchetteError(.notFound, message: "No blob with digest \(digest)")
        }
        return try BlobReader(path: path, digest: digest, cipher: cipher)
    }

    /// Reads the whole body with `digest` into memory. Prefer ``inputStream(for:)`` for large bodies.
    ///
    /// - Throws: ``CouchetteError`` `.notFound` when it is not stored, `.io` when it cannot be read, `.corrupt` when
    ///   an encrypted file does not verify, `.wrongEncryptionKey` when it was encrypted under another key.
    func data(for digest: AttachmentDigest) throws -> Data {
        let reader = try reader(for: digest)
        var result = Data(capacity: Int(clamping: reader.length))
        while let piece = try reader.next() { result.append(piece) }
        return result
    }

    /// A new, unopened stream over the body with `digest`, or `nil` when it is not stored. A stream over an encrypted
    /// body fails (`read` returns -1, ``InputStream/streamError`` says why) when a chunk or the digest does not verify.
    func inputStream(for digest: AttachmentDigest) -> InputStream? {
        guard contains(digest) else { return nil }
        return BlobContentStream { [self] () throws(CouchetteError) in try reader(for: digest) }
    }

    /// The digests of every stored body, in no particular order. Temporary and foreign files are ignored.
    ///
    /// - Throws: ``CouchetteError`` `.io` when the directory cannot be listed.
    func allDigests() throws -> [AttachmentDigest] {
        try fileNames().compactMap(BlobStore.digest(fromFileName:))
    }

    // MARK: - Removal

    /// Deletes the body with `digest`.
    ///
    /// - Returns: Whether it was stored.
    /// - Throws: ``CouchetteError`` `.io` when the file cannot be deleted.
    @discardableResult
    func remove(_ digest: AttachmentDigest) throws -> Bool {
        guard let path = path(for: digest) else { return false }
        return try gate.shared { () throws(CouchetteError) in try FileIO.removeFile(path) }
    }

    /// Compaction: deletes every stored body whose digest is not in `referenced`, and the temporary files left
    /// by interrupted writes (not those of writes in progress in this process).
    ///
    /// - Returns: The number of bodies deleted (temporary files are not counted).
    /// - Throws: ``CouchetteError`` `.io` when the directory cannot be listed or a file cannot be deleted.
    @discardableResult
    func removeAll(except referenced: Set<AttachmentDigest>) throws -> Int {
        try gate.shared { () throws -> Int in try ungatedRemoveAll(except: referenced) }
    }

    private func ungatedRemoveAll(except referenced: Set<AttachmentDigest>) throws -> Int {
        var removed = 0
        for name in try fileNames() {
            let path = (directoryPath as NSString).appendingPathComponent(name)
            if let digest = BlobStore.digest(fromFileName: name) {
                if !referenced.contains(digest), try FileIO.removeFile(path) { removed += 1 }
            } else if BlobTemporaryFile.isTemporaryName(name), !BlobTemporaryFile.isInProgress(name) {
                try FileIO.removeFile(path)
            }
        }
        return removed
    }

    // MARK: - Names

    /// The path of the body with `digest`; `nil` when it is not SHA-1.
    func path(for digest: AttachmentDigest) -> String? {
        guard digest.algorithm == .sha1 else { return nil }
        return (directoryPath as NSString).appendingPathComponent(digest.hexString + "." + BlobStore.fileExtension)
    }

    /// The digest a stored body's file name stands for: 40 lowercase hex digits then `.blob`.
    static func digest(fromFileName name: String) -> AttachmentDigest? {
        let suffix = "." + fileExtension
        guard name.hasSuffix(suffix) else { return nil }
        let hex = Array(name.utf8.dropLast(suffix.utf8.count))
        guard hex.count == 40 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        var index = 0
        while index < hex.count {
            guard let high = hexValue(hex[index]), let low = hexValue(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return try? AttachmentDigest(algorithm: .sha1, bytes: bytes)
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private func fileNames() throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directoryPath)
        } catch {
            throw CouchetteError(.io, message: "Cannot list the blob directory \(directory.lastPathComponent): \(error)")
        }
    }
}
