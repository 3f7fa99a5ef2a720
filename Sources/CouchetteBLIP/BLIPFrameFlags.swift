// MARK: - BLIPFrameFlags

/// The flags byte of a BLIP frame: its ``BLIPMessageType`` in the low three bits, then `Compressed`, `Urgent`,
/// `NoReply` and `MoreComing` (spec: blip-sync-protocol.md §2.3). Unknown bits are kept and ignored.
public struct BLIPFrameFlags: Sendable, Hashable {
    /// The raw bits.
    public var rawValue: UInt8

    /// This frame's payload is deflated with the connection's shared stream.
    public static let compressed: UInt8 = 0x08
    /// A scheduling hint: the message goes before normal ones.
    public static let urgent: UInt8 = 0x10
    /// The request needs no response.
    public static let noReply: UInt8 = 0x20
    /// More frames of this message follow.
    public static let moreComing: UInt8 = 0x40

    /// Flags from their raw bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Flags of a frame of `type` with the given bits set.
    public init(
        type: BLIPMessageType, compressed: Bool = false, urgent: Bool = false, noReply: Bool = false,
        moreComing: Bool = false
    ) {
        rawValue = type.rawValue
        if compressed { rawValue |= Self.compressed }
        if urgent { rawValue |= Self.urgent }
        if noReply { rawValue |= Self.noReply }
        if moreComing { rawValue |= Self.moreComing }
    }

    /// The frame's type; nil for the undefined values 3, 6 and 7.
    public var type: BLIPMessageType? { BLIPMessageType(rawValue: rawValue & 0x07) }
    /// Whether the payload is deflated.
    public var isCompressed: Bool { rawValue & Self.compressed != 0 }
    /// Whether the message is urgent.
    public var isUrgent: Bool { rawValue & Self.urgent != 0 }
    /// Whether the request needs no response.
    public var isNoReply: Bool { rawValue & Self.noReply != 0 }
    /// Whether more frames of the message follow.
    public var hasMoreComing: Bool { rawValue & Self.moreComing != 0 }
}
