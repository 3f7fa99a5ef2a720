import NIOCore

// MARK: - BLIPFrameWriter

/// Cuts outgoing messages into frames for one connection, keeping that direction's running checksum and shared
/// deflate stream (spec: blip-sync-protocol.md §2.3–§2.7). Frames must go on the wire in the order they are made.
///
/// ```swift
/// let writer = BLIPFrameWriter()
/// var outgoing = try BLIPOutgoingMessage(.request(number: 1, properties: ["Profile": "getCheckpoint"]))
/// while !outgoing.isFinished {
///     send(try writer.nextFrame(of: &outgoing, maximumSize: 4096))  // one binary WebSocket message each
/// }
/// ```
///
/// Not thread-safe: one connection's sending side owns it.
public final class BLIPFrameWriter {
    /// The frame size LiteCore uses while several messages are queued.
    public static let defaultFrameSize = 4096
    /// The frame size LiteCore uses while one message is queued alone.
    public static let bigFrameSize = 16384

    private var checksum = BLIPChecksum()
    private var deflater: BLIPDeflater?

    /// A writer for a new connection.
    public init() {}

    /// The running checksum so far.
    public var checksumValue: UInt32 { checksum.value }

    /// The next frame of `outgoing`: header, the next slice of its payload (deflated when the message asks for it)
    /// and the running checksum; `MoreComing` while payload remains.
    ///
    /// - Parameter maximumSize: The frame's size budget, header and checksum included (at least 16). A compressed
    ///   slice is taken at the budget's size before deflating, so the frame is usually smaller.
    /// - Throws: ``BLIPError`` when deflating fails or the message was already sent whole.
    public func nextFrame(of outgoing: inout BLIPOutgoingMessage, maximumSize: Int) throws(BLIPError) -> ByteBuffer {
        guard !outgoing.isFinished else { throw .protocolViolation("message #\(outgoing.message.number) was already sent") }
        let message = outgoing.message
        let headerSize = BLIPVarint.length(of: message.number) + 1
        let budget = max(maximumSize - headerSize - 4, 8)
        let end = min(outgoing.offset + budget, outgoing.payload.count)
        let slice = outgoing.payload[outgoing.offset..<end]
        let moreComing = end < outgoing.payload.count
        let flags = BLIPFrameFlags(
            type: message.type, compressed: message.isCompressed, urgent: message.isUrgent,
            noReply: message.isNoReply, moreComing: moreComing)

        var frame = ByteBuffer()
        frame.reserveCapacity(headerSize + slice.count + 8)
        BLIPVarint.write(message.number, to: &frame)
        BLIPVarint.write(UInt64(flags.rawValue), to: &frame)
        let headerEnd = frame.writerIndex
        if message.isCompressed {
            let deflater: BLIPDeflater
            if let existing = self.deflater {
                deflater = existing
            } else {
                deflater = try BLIPDeflater()
                self.deflater = deflater
            }
            frame.writeBytes(try deflater.compress(slice))
        } else {
            frame.writeBytes(slice)
        }
        checksum.update(slice)
        frame.writeInteger(checksum.value, endianness: .big)

        outgoing.offset = end
        outgoing.hasStarted = true
        outgoing.bytesSent += UInt64(frame.writerIndex - headerEnd)
        return frame
    }

    /// An acknowledgement frame: `number`, `ACKMSG` (for a request received) or `ACKRPY` (for a response), and the
    /// bytes received of that message so far; Urgent and NoReply set as LiteCore sends them, no checksum.
    public static func acknowledgement(ofResponse: Bool, number: UInt64, bytesReceived: UInt64) -> ByteBuffer {
        var frame = ByteBuffer()
        let type: BLIPMessageType = ofResponse ? .acknowledgeResponse : .acknowledgeRequest
        BLIPVarint.write(number, to: &frame)
        BLIPVarint.write(UInt64(BLIPFrameFlags(type: type, urgent: true, noReply: true).rawValue), to: &frame)
        BLIPVarint.write(bytesReceived, to: &frame)
        return frame
    }
}
