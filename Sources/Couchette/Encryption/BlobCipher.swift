import Crypto
import Foundation

// MARK: - BlobCipher

/// The encrypted attachment file format, version 1 (encryption-format.md §4): a 64-byte clear header, then the
/// content in chunks (64 KiB by default), each sealed with AES-256-GCM under a key of its own file, the chunk's index
/// in its nonce and additional data, and a flag on the last chunk — so chunks cannot be reordered, dropped, appended
/// or moved between files, and a truncated file never verifies.
///
/// ```swift
/// let cipher = BlobCipher(databaseKey: key)
/// let file = try cipher.seal(content)
/// try cipher.open(file) == content
/// ```
struct BlobCipher: Sendable {
    /// The key that seals blobs (`blobenc/v1/key`).
    let blobKey: SymmetricKey
    /// A fingerprint of the key, in each file's header (`blobenc/v1/key-id`): a file sealed under another key is
    /// recognised before any decryption.
    let keyID: Data

    static let magic = Data("EBLB".utf8)
    static let headerSize = 64
    static let tagSize = 16
    static let defaultChunkSizeLog2: UInt8 = 16

    /// The cipher of blobs whose keys derive from `databaseKey` (32 bytes) with HKDF-SHA256.
    init(databaseKey: Data) {
        let input = SymmetricKey(data: databaseKey)
        blobKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: input, info: Data("blobenc/v1/key".utf8), outputByteCount: 32)
        keyID = HKDF<SHA256>.deriveKey(inputKeyMaterial: input, info: Data("blobenc/v1/key-id".utf8), outputByteCount: 16)
            .withUnsafeBytes { Data($0) }
    }

    /// A file's key and nonce base, from its salt.
    func fileKeys(salt: Data) -> (key: SymmetricKey, nonceBase: Data) {
        let material = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: blobKey, salt: salt, info: Data("blobenc/v1/file".utf8), outputByteCount: 44
        ).withUnsafeBytes { Data($0) }
        return (SymmetricKey(data: material.prefix(32)), material.suffix(12))
    }

    /// The 64-byte header of a file.
    func header(salt: Data, chunkSizeLog2: UInt8) -> Data {
        var header = Self.magic
        header.append(contentsOf: [1, 1, chunkSizeLog2, 0])
        header.append(keyID)
        header.append(salt)
        header.append(Data(count: 8))
        return header
    }

    /// Seals `content` into a whole file (a fresh random salt unless given).
    func seal(_ content: Data, salt: Data? = nil, chunkSizeLog2: UInt8 = BlobCipher.defaultChunkSizeLog2) throws -> Data {
        var sealer = ChunkSealer(cipher: self, salt: salt, chunkSizeLog2: chunkSizeLog2)
        var file = sealer.header
        let chunkSize = sealer.chunkSize
        var offset = content.startIndex
        repeat {
            let end = min(offset + chunkSize, content.endIndex)
            file.append(try sealer.seal(content[offset..<end], isLast: end == content.endIndex))
            offset = end
        } while offset < content.endIndex
        return file
    }

    /// Opens a whole file.
    ///
    /// - Throws: `.wrongEncryptionKey` for a file sealed under another key; `.corrupt` for anything that does not
    ///   verify (header, any chunk, truncation, extension).
    func open(_ file: Data) throws -> Data {
        var opener = try ChunkOpener(cipher: self, header: file.prefix(Self.headerSize))
        let body = file.dropFirst(Self.headerSize)
        let storedChunk = opener.chunkSize + Self.tagSize
        guard body.count >= Self.tagSize else { throw Self.corrupt("is too short") }
        let chunks = (body.count + storedChunk - 1) / storedChunk
        var content = Data()
        for index in 0..<chunks {
            let start = body.startIndex + index * storedChunk
            let stored = body[start..<min(start + storedChunk, body.endIndex)]
            content.append(try opener.open(stored, isLast: index == chunks - 1))
        }
        return content
    }

    static func corrupt(_ problem: String) -> CouchetteError {
        CouchetteError(.corrupt, message: "An encrypted attachment \(problem)")
    }
}

// MARK: - Chunks

extension BlobCipher {
    /// Seals a file's chunks one after the other.
    struct ChunkSealer {
        let header: Data
        let chunkSize: Int
        private let key: SymmetricKey
        private let nonceBase: Data
        private var index: UInt64 = 0

        /// A sealer for a new file: a fresh random salt unless given, 64 KiB chunks unless told.
        init(cipher: BlobCipher, salt: Data? = nil, chunkSizeLog2: UInt8 = BlobCipher.defaultChunkSizeLog2) {
            let salt = salt ?? SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            header = cipher.header(salt: salt, chunkSizeLog2: chunkSizeLog2)
            chunkSize = 1 << Int(chunkSizeLog2)
            (key, nonceBase) = cipher.fileKeys(salt: salt)
        }

        /// The next stored chunk (ciphertext and tag); `isLast` for the final one.
        mutating func seal(_ plaintext: some DataProtocol, isLast: Bool) throws -> Data {
            let nonce = try AES.GCM.Nonce(data: BlobCipher.nonce(nonceBase, index))
            let box = try AES.GCM.seal(
                plaintext, using: key, nonce: nonce, authenticating: BlobCipher.additionalData(header, index, isLast))
            index += 1
            return box.ciphertext + box.tag
        }
    }

    /// Opens a file's chunks one after the other.
    struct ChunkOpener {
        let chunkSize: Int
        private let header: Data
        private let key: SymmetricKey
        private let nonceBase: Data
        private var index: UInt64 = 0

        /// Checks the header (magic, version, algorithm, flags, chunk size, key).
        init(cipher: BlobCipher, header: Data) throws {
            let bytes = Array(header)
            guard bytes.count == BlobCipher.headerSize, Data(bytes[0..<4]) == BlobCipher.magic else {
                throw BlobCipher.corrupt("has no header")
            }
            guard bytes[4] == 1, bytes[5] == 1, bytes[7] == 0, (12...24).contains(bytes[6]),
                bytes[56..<64].allSatisfy({ $0 == 0 })
            else { throw BlobCipher.corrupt("has an unknown header") }
            guard Data(bytes[8..<24]) == cipher.keyID else {
                throw CouchetteError(.wrongEncryptionKey, message: "An attachment is encrypted with another key")
            }
            self.header = Data(bytes)
            chunkSize = 1 << Int(bytes[6])
            (key, nonceBase) = cipher.fileKeys(salt: Data(bytes[24..<56]))
        }

        /// The plaintext of the next stored chunk; released only once its tag verifies.
        mutating func open(_ stored: some DataProtocol, isLast: Bool) throws -> Data {
            let bytes = Data(stored)
            guard bytes.count >= BlobCipher.tagSize, bytes.count <= chunkSize + BlobCipher.tagSize,
                isLast || bytes.count == chunkSize + BlobCipher.tagSize, !(isLast && bytes.count == BlobCipher.tagSize && index > 0)
            else { throw BlobCipher.corrupt("has a chunk of the wrong size") }
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: AES.GCM.Nonce(data: BlobCipher.nonce(nonceBase, index)),
                    ciphertext: bytes.dropLast(BlobCipher.tagSize), tag: bytes.suffix(BlobCipher.tagSize))
                let plaintext = try AES.GCM.open(
                    box, using: key, authenticating: BlobCipher.additionalData(header, index, isLast))
                index += 1
                return plaintext
            } catch {
                throw BlobCipher.corrupt("failed its check at chunk \(index)")
            }
        }
    }

    /// `nonceBase` XOR (4 zero bytes ‖ BE64(index)).
    static func nonce(_ base: Data, _ index: UInt64) -> Data {
        var nonce = Array(base)
        for byte in 0..<8 { nonce[4 + byte] ^= UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(byte))) }
        return Data(nonce)
    }

    /// header ‖ BE64(index) ‖ final flag.
    static func additionalData(_ header: Data, _ index: UInt64, _ isLast: Bool) -> Data {
        var data = header
        for byte in 0..<8 { data.append(UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(byte)))) }
        data.append(isLast ? 1 : 0)
        return data
    }
}
