import CouchetteCore
import Crypto
import Foundation

/// A file being written into a ``BlobStore``: it owns its descriptor, hashes every byte as it is appended,
/// and ends either renamed to its digest's name (``commit(to:)``) or deleted (in `deinit`).
///
/// In an encrypted store the file is written in the encrypted format (``BlobCipher``): chunks are sealed as they
/// fill, the last one when the file is finished; the digest and length are the plaintext's.
///
/// Temporary files are named `tmp-<UUID>.blobtmp`, in the store's own directory so that the final rename
/// is atomic. While one is open it is registered process-wide, so compaction
/// (``BlobStore/removeAll(except:)``) deletes only leftovers of interrupted writes, never a write in progress.
final class BlobTemporaryFile {
    /// The prefix of temporary file names.
    static let namePrefix = "tmp-"
    /// The extension of temporary file names.
    static let nameSuffix = ".blobtmp"

    /// The file's name: unique, since it holds a UUID.
    let name: String
    /// The file's path.
    let path: String
    /// The number of bytes appended so far.
    private(set) var length: UInt64 = 0

    private var descriptor: Int32?
    private var committed = false
    private var sha1 = Insecure.SHA1()
    private var md5: Insecure.MD5?
    private var sha256: SHA256?
    private let expectedDigest: AttachmentDigest?
    /// For an encrypted store: the sealer and the plaintext of the chunk not sealed yet (sealed once more follows,
    /// or at the end as the last one).
    private var sealer: BlobCipher.ChunkSealer?
    private var pending = Data()

    /// Creates a new, empty temporary file in `directory`.
    ///
    /// - Parameters:
    ///   - expectedDigest: A digest the content must match (any algorithm); checked by ``finish()``.
    ///   - cipher: The store's cipher when it is encrypted.
    init(directory: String, expectedDigest: AttachmentDigest?, cipher: BlobCipher? = nil) throws(CouchetteError) {
        let name = BlobTemporaryFile.namePrefix + UUID().uuidString + BlobTemporaryFile.nameSuffix
        self.name = name
        path = (directory as NSString).appendingPathComponent(name)
        self.expectedDigest = expectedDigest
        switch expectedDigest?.algorithm {
        case .md5: md5 = Insecure.MD5()
        case .sha256: sha256 = SHA256()
        case .sha1, nil: break
        }
        BlobTemporaryFile.inProgress.insert(name)
        do {
            descriptor = try FileIO.createExclusive(path)
        } catch {
            BlobTemporaryFile.inProgress.remove(name)
            throw error
        }
        if let cipher {
            let sealer = BlobCipher.ChunkSealer(cipher: cipher)
            self.sealer = sealer
            pending.reserveCapacity(sealer.chunkSize)
            try FileIO.writeAll(descriptor!, sealer.header, path: path)
        }
    }

    deinit {
        if let descriptor { FileIO.closeDescriptor(descriptor) }
        if !committed { _ = try? FileIO.removeFile(path) }
        BlobTemporaryFile.inProgress.remove(name)
    }

    /// Hashes and writes `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer) throws(CouchetteError) {
        guard let descriptor else { preconditionFailure("append after finish") }
        guard !bytes.isEmpty else { return }
        sha1.update(bufferPointer: bytes)
        md5?.update(bufferPointer: bytes)
        sha256?.update(bufferPointer: bytes)
        length += UInt64(bytes.count)
        guard sealer != nil else { return try FileIO.writeAll(descriptor, bytes, path: path) }
        var rest = bytes[...]
        while !rest.isEmpty {
            if pending.count == sealer!.chunkSize { try sealPending(isLast: false) }
            let taken = min(rest.count, sealer!.chunkSize - pending.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
            rest = rest.dropFirst(taken)
        }
    }

    /// Seals the pending plaintext as the next chunk and writes it.
    private func sealPending(isLast: Bool) throws(CouchetteError) {
        guard let descriptor else { preconditionFailure("seal after finish") }
        let stored: Data
        do {
            stored = try sealer!.seal(pending, isLast: isLast)
        } catch {
            throw CouchetteError(.io, message: "Cannot encrypt blob file \(name): \(error)")
        }
        pending.removeAll(keepingCapacity: true)
        try FileIO.writeAll(descriptor, stored, path: path)
    }

    /// Flushes and closes the file, and checks the expected digest.
    ///
    /// - Returns: The SHA-1 digest and length of the content.
    /// - Throws: ``CouchetteError`` `.badInput` when the content does not match the expected digest, `.io` when
    ///   the file cannot be flushed.
    func finish() throws(CouchetteError) -> (digest: AttachmentDigest, length: UInt64) {
        guard let descriptor else { preconditionFailure("finish called twice") }
        if sealer != nil { try sealPending(isLast: true) }
        self.descriptor = nil
        defer { FileIO.closeDescriptor(descriptor) }
        try FileIO.synchronize(descriptor, path: path)
        let digest = try! AttachmentDigest(algorithm: .sha1, bytes: Array(sha1.finalize()))
        if let expectedDigest {
            let actual: AttachmentDigest
            switch expectedDigest.algorithm {
            case .sha1: actual = digest
            case .md5: actual = try! AttachmentDigest(algorithm: .md5, bytes: Array(md5!.finalize()))
            case .sha256: actual = try! AttachmentDigest(algorithm: .sha256, bytes: Array(sha256!.finalize()))
            }
            guard actual == expectedDigest else {
                throw CouchetteError(
                    .badInput, message: "Blob content (\(length) bytes) does not match its digest \(expectedDigest)")
            }
        }
        return (digest, length)
    }

    /// Moves the finished file to `finalPath`, or deletes it when that file already exists (content is stored
    /// once per digest). Durable: the directory entry is flushed after the rename.
    func commit(to finalPath: String) throws(CouchetteError) {
        precondition(descriptor == nil, "commit before finish")
        if let existing = try FileIO.fileInfo(finalPath), existing.isRegularFile {
            return  // deinit removes the temporary file
        }
        try FileIO.renameFile(path, to: finalPath)
        committed = true
        FileIO.synchronizeDirectory((finalPath as NSString).deletingLastPathComponent)
    }

    // MARK: - Names

    /// Whether `name` (a file name, no directory) is a temporary file's.
    static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(namePrefix) && name.hasSuffix(nameSuffix)
    }

    /// Whether the temporary file named `name` is being written by this process.
    static func isInProgress(_ name: String) -> Bool {
        inProgress.contains(name)
    }

    private static let inProgress = NameRegistry()

    /// The names of the temporary files being written, shared by every store in the process.
    private final class NameRegistry: @unchecked Sendable {
        private let lock = NSLock()
        private var names: Set<String> = []

        func insert(_ name: String) {
            lock.lock()
            defer { lock.unlock() }
            names.insert(name)
        }

        func remove(_ name: String) {
            lock.lock()
            defer { lock.unlock() }
            names.remove(name)
        }

        func contains(_ name: String) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            return names.contains(name)
        }
    }
}
