import CompressNIO
import NIOCore

// MARK: - BLIPInflater

/// The raw-inflate stream of one direction of a connection: each compressed frame's bytes, with the sync-flush
/// trailer `00 00 FF FF` put back, continue it (spec: blip-sync-protocol.md §2.7).
///
/// Not thread-safe: it belongs to one connection's ``BLIPFrameReader``.
public final class BLIPInflater {
    private let decompressor: ZlibDecompressor

    /// The most bytes one frame may inflate to; more ends the connection (a compressed frame of at most a few
    /// KiB that inflates past this is an attack, not a message).
    public static let maximumInflatedFrameSize = 16 << 20

    /// A new stream.
    public init() throws(BLIPError) {
        do {
            decompressor = try ZlibDecompressor(algorithm: .deflate, windowSize: 15)
        } catch {
            throw .protocolViolation("cannot start an inflate stream: \(error)")
        }
    }

    /// The bytes a compressed frame payload stands for.
    ///
    /// - Throws: ``BLIPError/badCompressedData`` for data the stream refuses or that inflates past
    ///   ``maximumInflatedFrameSize``.
    public func decompress(_ bytes: some Collection<UInt8>) throws(BLIPError) -> [UInt8] {
        var input = ByteBuffer(bytes: bytes)
        input.writeBytes(BLIPDeflater.syncFlushTrailer)
        var output = ByteBuffer()
        var capacity = max(4 * input.readableBytes, 1024)
        while true {
            output.reserveCapacity(minimumWritableBytes: capacity)
            do {
                try decompressor.inflate(from: &input, to: &output)
                return Array(output.readableBytesView)
            } catch let error as CompressNIOError where error == .bufferOverflow {
                guard output.readableBytes < Self.maximumInflatedFrameSize else { throw .badCompressedData }
                capacity = output.readableBytes
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                // Every input byte was used and all output written.
                return Array(output.readableBytesView)
            } catch {
                throw .badCompressedData
            }
        }
    }
}
