import CouchetteCore
import Foundation

// MARK: - Writing

extension BlobStore {
    /// Stores `data` (once per digest).
    ///
    /// - Returns: The SHA-1 digest and length of the content.
    /// - Throws: ``CouchetteError`` `.io` when it cannot be written.
    @discardableResult
    func write(data: Data) throws -> (digest: AttachmentDigest, length: UInt64) {
        try write(data: data, expectedDigest: nil)
    }

    /// Stores `data` if it matches `expectedDigest` (of any algorithm: SHA-1, or MD5 from a CouchDB peer).
    ///
    /// - Returns: The SHA-1 digest and length of the content.
    /// - Throws: ``CouchetteError`` `.badInput` when the content does not match, and then nothing is stored;
    ///   `.io` when it cannot be written.
    @discardableResult
    func write(data: Data, expectedDigest: AttachmentDigest?) throws -> (digest: AttachmentDigest, length: UInt64) {
        let digest = AttachmentDigest.sha1(of: data)
        if let expectedDigest, expectedDigest.algorithm == .sha1, expectedDigest != digest {
            throw CouchetteError(
                .badInput, message: "Blob content (\(data.count) bytes) does not match its digest \(expectedDigest)")
        }
        if (expectedDigest == nil || expectedDigest?.algorithm == .sha1), contains(digest) {
            return (digest, UInt64(data.count))  // already stored: skip the copy
        }
        return try writeChunks(expectedDigest: expectedDigest) { file in
            try data.withUnsafeBytes { bytes in try file.append(bytes) }
        }
    }

    /// Stores everything `stream` yields, copying it in chunks. The stream is opened if needed and closed at
    /// the end.
    ///
    /// - Returns: The SHA-1 digest and length of the content.
    /// - Throws: ``CouchetteError`` `.io` when the stream fails or the content cannot be written.
    @discardableResult
    func write(stream: InputStream) throws -> (digest: AttachmentDigest, length: UInt64) {
        try write(stream: stream, expectedDigest: nil)
    }

    /// Stores everything `stream` yields if it matches `expectedDigest`.
    ///
    /// - Throws: ``CouchetteError`` `.badInput` when the content does not match, and then nothing is stored;
    ///   `.io` when the stream fails or the content cannot be written.
    @discardableResult
    func write(stream: InputStream, expectedDigest: AttachmentDigest?) throws -> (
        digest: AttachmentDigest, length: UInt64
    ) {
        if stream.streamStatus == .notOpen { stream.open() }
        defer { stream.close() }
        return try writeChunks(expectedDigest: expectedDigest) { file in
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: FileIO.chunkSize)
            defer { buffer.deallocate() }
            while true {
                let count = stream.read(buffer, maxLength: FileIO.chunkSize)
                if count == 0 { break }
                guard count > 0 else {
                    let reason = stream.streamError.map { "\($0)" } ?? "unknown error"
                    throw CouchetteError(.io, message: "Cannot read the blob's content stream: \(reason)")
                }
                try file.append(UnsafeRawBufferPointer(start: buffer, count: count))
            }
        }
    }

    /// Stores a copy of the file at `url`, copying it in chunks.
    ///
    /// - Returns: The SHA-1 digest and length of the content.
    /// - Throws: ``CouchetteError`` `.badInput` when `url` is not a file URL or names a directory, `.notFound`
    ///   when there is no such file, `.io` when it cannot be read or written.
    @discardableResult
    func write(fileAt url: URL) throws -> (digest: AttachmentDigest, length: UInt64) {
        try write(fileAt: url, expectedDigest: nil)
    }

    /// Stores a copy of the file at `url` if it matches `expectedDigest`.
    ///
    /// - Throws: ``CouchetteError`` `.badInput` when the content does not match (nothing is stored) or `url` is
    ///   not a regular file's URL, `.notFound` when there is no such file, `.io` when it cannot be read or written.
    @discardableResult
    func write(fileAt url: URL, expectedDigest: AttachmentDigest?) throws -> (
        digest: AttachmentDigest, length: UInt64
    ) {
        let path = try BlobStore.regularFilePath(of: url)
        let descriptor = try FileIO.openForReading(path)
        defer { FileIO.closeDescriptor(descriptor) }
        return try writeChunks(expectedDigest: expectedDigest) { file in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileIO.chunkSize, alignment: 1)
            defer { buffer.deallocate() }
            while true {
                let count = try FileIO.readChunk(descriptor, into: buffer, path: path)
                if count == 0 { break }
                try file.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
        }
    }

    /// Stores the body `reader` reads (from another store, decrypted and encrypted again as the two stores need),
    /// checking it against `digest` on the way.
    ///
    /// - Throws: ``CouchetteError`` `.corrupt` or `.wrongEncryptionKey` when the source does not verify, and then
    ///   nothing is stored; `.io` when it cannot be read or written.
    @discardableResult
    func write(contentOf digest: AttachmentDigest, from reader: BlobReader) throws -> (
        digest: AttachmentDigest, length: UInt64
    ) {
        try writeChunks(expectedDigest: digest) { file in
            while let piece = try reader.next() {
                try piece.withUnsafeBytes { bytes in try file.append(bytes) }
            }
        }
    }

    /// The path of the regular file `url` names.
    ///
    /// - Throws: ``CouchetteError`` `.badInput` when `url` is not a file URL or does not name a regular file,
    ///   `.notFound` when nothing exists there.
    static func regularFilePath(of url: URL) throws -> String {
        guard url.isFileURL else {
            throw CouchetteError(.badInput, message: "Blob content must come from a file URL, not \(url.scheme ?? "?"):")
        }
        let path = url.path
        guard let info = try FileIO.fileInfo(path) else {
            throw CouchetteError(.notFound, message: "No file \(url.lastPathComponent) for the blob's content")
        }
        guard info.isRegularFile else {
            throw CouchetteError(.badInput, message: "\(url.lastPathComponent) is not a regular file")
        }
        return path
    }

    /// Writes a temporary file with `fill`, checks it, and moves it to its digest's name.
    private func writeChunks(
        expectedDigest: AttachmentDigest?, _ fill: (BlobTemporaryFile) throws -> Void
    ) throws -> (digest: AttachmentDigest, length: UInt64) {
        try gate.shared { () throws -> (digest: AttachmentDigest, length: UInt64) in
            let file = try BlobTemporaryFile(directory: directory.path, expectedDigest: expectedDigest, cipher: cipher)
            try fill(file)
            let result = try file.finish()
            guard let finalPath = path(for: result.digest) else { preconditionFailure("a SHA-1 digest has a path") }
            try file.commit(to: finalPath)
            return result
        }
    }
}
