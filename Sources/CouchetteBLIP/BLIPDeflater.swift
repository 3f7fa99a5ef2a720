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

    /// A new stream: a 32 KiB window and memory level 9, as LiteCore's, but zlib level 1 where LiteCore uses 6 — the
    /// shared window does most of the work on sync messages, and level 6 made deflate a third of the gateway's
    /// processor time serving a pull (`cbl3.pull`) for ~2 % fewer bytes (`blip.delta-bytes`' whole bodies). Any level
    /// inflates alike.
    public init() throws(BLIPError) {
        do {
            compressor = try ZlibCompressor(
                algorithm: .deflate,
                configuration: ZlibConfiguration(windowSize: 15, compressionLevel: 1, memoryLevel: 9))
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
