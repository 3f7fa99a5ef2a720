import NIOCore

// MARK: - BLIPVarint

/// BLIP's variable-length unsigned integers: LEB128, 7 bits per byte, least significant group first, the high bit
/// set on every byte but the last (spec: blip-sync-protocol.md §2.2).
///
/// ```swift
/// var buffer = ByteBuffer()
/// BLIPVarint.write(300, to: &buffer)        // ac 02
/// let value = try BLIPVarint.read(from: &buffer)  // 300
/// ```
public enum BLIPVarint {
    /// The most bytes a 64-bit value takes.
    public static let maximumLength = 10

    /// Appends the minimal encoding of `value`.
    public static func write(_ value: UInt64, to buffer: inout ByteBuffer) {
        encode(value) { buffer.writeInteger($0) }
    }

    /// Appends the minimal encoding of `value`.
    public static func write(_ value: UInt64, to bytes: inout [UInt8]) {
        encode(value) { bytes.append($0) }
    }

    /// Gives the bytes of `value`'s minimal encoding one by one.
    @inline(__always)
    private static func encode(_ value: UInt64, _ emit: (UInt8) -> Void) {
        var value = value
        while value >= 0x80 {
            emit(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        emit(UInt8(value))
    }

    /// How many bytes the encoding of `value` takes.
    public static func length(of value: UInt64) -> Int {
        var length = 1
        var value = value >> 7
        while value != 0 {
            length += 1
            value >>= 7
        }
        return length
    }

    /// Reads one varint, moving the buffer's reader index past it; non-minimal forms are accepted.
    ///
    /// - Throws: ``BLIPError/badVarint`` when the buffer ends inside the varint or it is longer than 64 bits;
    ///   the reader index is left where it was then.
    public static func read(from buffer: inout ByteBuffer) throws(BLIPError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var offset = buffer.readerIndex
        while let byte = buffer.getInteger(at: offset, as: UInt8.self) {
            offset += 1
            let bits = UInt64(byte & 0x7F)
            if shift == 63 && bits > 1 { throw .badVarint }
            value |= bits << shift
            if byte & 0x80 == 0 {
                buffer.moveReaderIndex(to: offset)
                return value
            }
            shift += 7
            if shift > 63 { throw .badVarint }
        }
        throw .badVarint
    }
}
