import CZlib

// MARK: - BLIPChecksum

/// The running CRC-32 of one direction of a connection: it covers the uncompressed payload bytes of every frame
/// sent that way so far except acknowledgements, and is never reset (spec: blip-sync-protocol.md §2.4).
///
/// ```swift
/// var checksum = BLIPChecksum()
/// checksum.update(Array("123456789".utf8))
/// checksum.value  // 0xCBF43926
/// ```
public struct BLIPChecksum: Sendable, Hashable {
    /// The CRC-32 of everything added so far (0 before anything).
    public private(set) var value: UInt32

    /// A checksum starting from `value` (0 for a new connection).
    public init(value: UInt32 = 0) {
        self.value = value
    }

    /// Adds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let current = value
        let updated: UInt32? = bytes.withContiguousStorageIfAvailable { buffer in
            Self.crc32(current, buffer)
        }
        value = updated ?? Array(bytes).withUnsafeBufferPointer { Self.crc32(current, $0) }
    }

    private static func crc32(_ start: UInt32, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return start }
        return UInt32(truncatingIfNeeded: CZlib.crc32(uLong(start), base, uInt(buffer.count)))
    }
}
