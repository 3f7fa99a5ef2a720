import CompressNIO
import NIOCore

// MARK: - AttachmentEncoding

/// Decodes attachment bodies sent compressed (`"encoding": "gzip"`, replication-protocol.md §9.1). The gateway
/// stores every attachment decoded, so digests and lengths describe the bytes clients read back.
///
/// ```swift
/// let bytes = try AttachmentEncoding.decode(gzipped, encoding: "gzip")
/// ```
enum AttachmentEncoding {
    /// The largest decoded body accepted, in bytes.
    static let maximumDecodedSize = 1 << 30

    /// The decoded bytes of `data` sent with `encoding` (`nil` or `identity`: unchanged).
    ///
    /// - Throws: 400 for an unknown encoding or corrupt data.
    static func decode(_ data: [UInt8], encoding: String?) throws(GatewayError) -> [UInt8] {
        switch encoding?.lowercased() {
        case nil, "identity":
            return data
        case "gzip":
            var buffer = ByteBuffer(bytes: data)
            do {
                var decoded = try buffer.decompress(with: .gzip(), maxSize: maximumDecodedSize)
                return decoded.readBytes(length: decoded.readableBytes) ?? []
            } catch {
                throw .badRequest("Invalid gzip attachment data")
            }
        case let other?:
            throw .badRequest("Unsupported attachment encoding \"\(other)\"")
        }
    }
}
