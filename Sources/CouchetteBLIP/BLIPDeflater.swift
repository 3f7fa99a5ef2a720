import CompressNIO
import NIOCore

// MARK: - BLIPDeflater

/// The raw-deflate stream of one direction of a connection, shared by every compressed frame of every message:
/// each frame's payload slice is fed in and sync-flushed, and the flush's trailing `00 00 FF FF` is left off the wire
/// (spec: blip-sync-protocol.md §2.7).
///
/// Not thread-safe: it belongs to one connection's ``BLIPFrameWriter``.
public final class BLIPDeflater {
    private let compressor: ZlibCompressor

    /// The empty stored block a sync flush ends with, which BLIP leaves off.
    static let syncFlushTrailer: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// A new stream (zlib level 6, memory level 9, a 32 KiB window, as LiteCore's).
    public init() throws(BLIPError) {
        do {
            compressor = try ZlibCompressor(
                algorithm: .deflate,
                configuration: ZlibConfiguration(windowSize: 15, compressionLevel: 6, memoryLevel: 9))
        } catch {
            throw .protocolViolation("cannot start a deflate stream: \(error)")
        }
    }

    /// The compressed form of `bytes`, continuing the stream, without the sync-flush trailer.
    public func compress(_ bytes: some Collection<UInt8>) throws(BLIPError) -> [UInt8] {
        var input = ByteBuffer(bytes: bytes)
        // deflateBound plus the flush's few bytes: a sync flush then always fits.
        var output = ByteBuffer()
        output.reserveCapacity(compressor.maxSize(from: input) + 16)
        do {
            try compressor.deflate(from: &input, to: &output, flush: .sync)
        } catch {
            throw .protocolViolation("deflate failed: \(error)")
        }
        guard input.readableBytes == 0 else { throw .protocolViolation("deflate left input behind") }
        var compressed = Array(output.readableBytesView)
        if compressed.suffix(4).elementsEqual(Self.syncFlushTrailer) { compressed.removeLast(4) }
        return compressed
    }
}
