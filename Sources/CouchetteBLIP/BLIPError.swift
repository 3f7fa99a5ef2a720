// MARK: - BLIPError

/// What goes wrong speaking BLIP: a peer breaking the framing rules, which ends the connection (spec:
/// blip-sync-protocol.md §2.11), or a single message that cannot be made sense of, which only fails that message.
public enum BLIPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A varint that runs past the end of its frame, or past 64 bits.
    case badVarint
    /// A frame too short to hold its header or checksum.
    case truncatedFrame
    /// A frame whose checksum does not match the running CRC-32 of its direction.
    case checksumMismatch(expected: UInt32, found: UInt32)
    /// Compressed bytes the connection's inflater refuses.
    case badCompressedData
    /// A frame of a message type BLIP does not define, or a message broken in a way that ends its connection.
    case protocolViolation(String)
    /// A message whose properties cannot be read (length past the message, no closing NUL, odd NUL count, bad UTF-8).
    case badProperties(String)
    /// Properties over ``BLIPProperties/maximumSize``.
    case propertiesTooLarge(Int)
    /// A sync message refused as an HTTP request would be (a malformed `rev`, a checkpoint conflict…): its reply is
    /// `ERR HTTP/<status>` with `reason`.
    case refused(status: Int, reason: String)

    /// Whether the connection must be closed (WebSocket close code 1002) rather than the message failed.
    public var isFatal: Bool {
        switch self {
        case .badVarint, .truncatedFrame, .checksumMismatch, .badCompressedData, .protocolViolation: true
        case .badProperties, .propertiesTooLarge, .refused: false
        }
    }

    public var description: String {
        switch self {
        case .badVarint: "BLIP: bad varint"
        case .truncatedFrame: "BLIP: truncated frame"
        case .checksumMismatch(let expected, let found):
            "BLIP: frame checksum mismatch (expected \(String(expected, radix: 16)), found \(String(found, radix: 16)))"
        case .badCompressedData: "BLIP: invalid compressed data"
        case .protocolViolation(let reason): "BLIP: \(reason)"
        case .badProperties(let reason): "BLIP: bad properties: \(reason)"
        case .propertiesTooLarge(let size): "BLIP: properties of \(size) bytes are over the limit"
        case .refused(let status, let reason): "\(reason) (\(status))"
        }
    }
}
