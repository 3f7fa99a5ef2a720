import CouchetteCore
import Crypto
import Foundation

/// Reads one stored body's content piece by piece, never holding it whole: the file's bytes for a plain store; for an
/// encrypted one, each chunk once its tag verifies, and at the end a check that the content has the digest the file
/// is named by (encryption-format.md §4: a valid file renamed over another must not pass).
///
/// ```swift
/// let reader = try BlobReader(path: path, digest: digest, cipher: cipher)
/// while let piece = try reader.next() { consume(piece) }   // nil once every check passed
/// ```
final class BlobReader {
    private let path: String
    private let descriptor: Int32
    private let digest: AttachmentDigest
    private let decryption: Decryption?
    /// The content's length in bytes (from the file's size and, when encrypted, its chunk size).
    let length: UInt64
    private var finished = false

    /// An encrypted file's reading state.
    private final class Decryption {
        var opener: BlobCipher.ChunkOpener
        var sha1 = Insecure.SHA1()
        let storedChunkSize: Int
        let chunkCount: UInt64
        var nextChunk: UInt64 = 0

        init(opener: BlobCipher.ChunkOpener, storedChunkSize: Int, chunkCount: UInt64) {
            self.opener = opener
            self.storedChunkSize = storedChunkSize
            self.chunkCount = chunkCount
        }
    }

    /// Opens the body stored at `path` under the name of `digest`; `cipher` for an encrypted store.
    ///
    /// - Throws: ``CouchetteError`` `.notFound` when there is no file, `.wrongEncryptionKey` when it was sealed under
    ///   another key, `.corrupt` for a header or size that is not the format's, `.io` when it cannot be read.
    init(path: String, digest: AttachmentDigest, cipher: BlobCipher?) throws(CouchetteError) {
        self.path = path
        self.digest = digest
        descriptor = try FileIO.openForReading(path)
        let size: UInt64
        do {
            size = try FileIO.size(of: descriptor, path: path)
        } catch {
            FileIO.closeDescriptor(descriptor)
            throw error
        }
        guard let cipher else {
            decryption = nil
            length = size
            return
        }
        do {
            var header = Data(count: BlobCipher.headerSize)
            let count = try FileIO.readFully(descriptor, into: &header, path: path)
            guard count == BlobCipher.headerSize else { throw BlobCipher.corrupt("has no header") }
            let opener = try BlobCipher.ChunkOpener(cipher: cipher, header: header)
            let stored = opener.chunkSize + BlobCipher.tagSize
            let body = size - UInt64(BlobCipher.headerSize)
            guard body >= UInt64(BlobCipher.tagSize) else { throw BlobCipher.corrupt("is too short") }
            let chunks = (body + UInt64(stored) - 1) / UInt64(stored)
            decryption = Decryption(opener: opener, storedChunkSize: stored, chunkCount: chunks)
            length = body - chunks * UInt64(BlobCipher.tagSize)
        } catch {
            FileIO.closeDescriptor(descriptor)
            throw CouchetteError.wrap(error)
        }
    }

    deinit { FileIO.closeDescriptor(descriptor) }

    /// The next piece of content (at most 64 KiB plain, one chunk encrypted), or nil at the end, once every check
    /// passed. An empty body yields nil at once.
    ///
    /// - Throws: ``CouchetteError`` `.corrupt` when a chunk or the digest does not verify (whatever was returned
    ///   before must then be discarded), `.io` when the file cannot be read.
    func next() throws(CouchetteError) -> Data? {
        guard !finished else { return nil }
        guard let decryption else { return try nextPlain() }
        while decryption.nextChunk < decryption.chunkCount {
            var stored = Data(count: decryption.storedChunkSize)
            let count = try FileIO.readFully(descriptor, into: &stored, path: path)
            stored.removeSubrange(count...)
            let plaintext: Data
            do {
                plaintext = try decryption.opener.open(stored, isLast: decryption.nextChunk == decryption.chunkCount - 1)
            } catch {
                throw CouchetteError.wrap(error)
            }
            decryption.nextChunk += 1
            decryption.sha1.update(data: plaintext)
            if !plaintext.isEmpty { return plaintext }  // only an empty blob's one chunk is empty
        }
        finished = true
        let actual = try! AttachmentDigest(algorithm: .sha1, bytes: Array(decryption.sha1.finalize()))
        guard actual == digest else { throw BlobCipher.corrupt("does not hold the content of \(digest)") }
        return nil
    }

    private func nextPlain() throws(CouchetteError) -> Data? {
        var piece = Data(count: FileIO.chunkSize)
        let count = try piece.withUnsafeMutableBytes { buffer in
            Result { () throws(CouchetteError) in try FileIO.readChunk(descriptor, into: buffer, path: path) }
        }.get()
        guard count > 0 else {
            finished = true
            return nil
        }
        piece.removeSubrange(count...)
        return piece
    }

    /// The content's length from an encrypted file's size and chunk size (its header's byte 6); nil when the size
    /// cannot be one of the format's.
    static func plaintextLength(fileSize: UInt64, chunkSizeLog2: UInt8) -> UInt64? {
        guard (12...24).contains(chunkSizeLog2), fileSize >= UInt64(BlobCipher.headerSize + BlobCipher.tagSize) else {
            return nil
        }
        let body = fileSize - UInt64(BlobCipher.headerSize)
        let stored = UInt64(1 << Int(chunkSizeLog2) + BlobCipher.tagSize)
        let chunks = (body + stored - 1) / stored
        return body - chunks * UInt64(BlobCipher.tagSize)
    }
}
