import NIOCore

// MARK: - BLIPFrameReader

/// Reassembles incoming frames into messages for one connection, checking that direction's running checksum and
/// continuing its shared inflate stream (spec: blip-sync-protocol.md §2.3–§2.8). Frames must be given in the order
/// they arrived.
///
/// ```swift
/// let reader = BLIPFrameReader()
/// for event in try reader.read(frame) {   // a thrown error ends the connection (close code 1002)
///     switch event {
///     case .message(let message): handle(message)
///     case .acknowledgement(let frame): send(frame)   // flow control for a long incoming message
///     case .acknowledged(let ofResponse, let number, let bytes): resume(number, bytes)
///     case .badMessage(let type, let number, let error): refuse(type, number, error)
///     }
/// }
/// ```
///
/// Not thread-safe: one connection's receiving side owns it.
public final class BLIPFrameReader {
    /// What a frame brought.
    public enum Event: Sendable, Hashable {
        /// A message's last frame arrived.
        case message(BLIPMessage)
        /// An acknowledgement frame to send back: more than ``acknowledgementThreshold`` bytes of a message arrived
        /// since the last one.
        case acknowledgement(ByteBuffer)
        /// The peer acknowledged `bytes` of a message this side sends (a request when `ofResponse` is false).
        case acknowledged(ofResponse: Bool, number: UInt64, bytes: UInt64)
        /// A message arrived whole but cannot be read (its properties): refuse it (a request gets `ERR BLIP/400`);
        /// the connection goes on.
        case badMessage(type: BLIPMessageType, number: UInt64, error: BLIPError)
    }

    /// Bytes of one message received since the last acknowledgement after which another is sent
    /// (`kIncomingAckThreshold`).
    public static let acknowledgementThreshold: UInt64 = 50_000

    private struct Partial {
        var flags: BLIPFrameFlags
        var payload: [UInt8] = []
        var bytesReceived: UInt64 = 0
        var bytesAcknowledged: UInt64 = 0
    }

    private var checksum = BLIPChecksum()
    private var inflater: BLIPInflater?
    private var partials: [BLIPMessageKey: Partial] = [:]
    /// The highest request number whose first frame arrived: requests begin in number order, so a frame of a lower
    /// number that is not in progress belongs to a finished request.
    private var highestRequestStarted: UInt64 = 0

    /// A reader for a new connection.
    public init() {}

    /// The running checksum so far.
    public var checksumValue: UInt32 { checksum.value }

    /// How many messages are partly received.
    public var partialMessageCount: Int { partials.count }

    /// Reads one frame (one binary WebSocket message).
    ///
    /// - Throws: A fatal ``BLIPError`` (bad varint, truncated frame, checksum mismatch, bad compressed data): close
    ///   the connection with code 1002; nothing of the frame was delivered.
    public func read(_ frame: ByteBuffer) throws(BLIPError) -> [Event] {
        var frame = frame
        let number = try BLIPVarint.read(from: &frame)
        let rawFlags = try BLIPVarint.read(from: &frame)
        let flags = BLIPFrameFlags(rawValue: UInt8(truncatingIfNeeded: rawFlags))
        let type = flags.type

        if let type, type.isAcknowledgement {
            let bytes = try BLIPVarint.read(from: &frame)
            return [.acknowledged(ofResponse: type == .acknowledgeResponse, number: number, bytes: bytes)]
        }

        guard frame.readableBytes >= 4 else { throw .truncatedFrame }
        let wireBytes = UInt64(frame.readableBytes)
        guard let bodyBytes = frame.readBytes(length: frame.readableBytes - 4),
            let expected = frame.readInteger(endianness: .big, as: UInt32.self)
        else { throw .truncatedFrame }
        let slice: [UInt8]
        if flags.isCompressed {
            let inflater: BLIPInflater
            if let existing = self.inflater {
                inflater = existing
            } else {
                inflater = try BLIPInflater()
                self.inflater = inflater
            }
            slice = try inflater.decompress(bodyBytes)
        } else {
            slice = bodyBytes
        }
        var updated = checksum
        updated.update(slice)
        guard updated.value == expected else { throw .checksumMismatch(expected: updated.value, found: expected) }
        checksum = updated

        // A frame of an undefined type keeps the checksum going and is otherwise ignored.
        guard let type else { return [] }
        let key = BLIPMessageKey(isResponse: type.isResponse, number: number)
        var partial: Partial
        if let existing = partials.removeValue(forKey: key) {
            partial = existing
        } else {
            if !type.isResponse {
                // A request's number that is not new belongs to a finished request: the frame is dropped.
                guard number > highestRequestStarted else { return [] }
                highestRequestStarted = number
            }
            partial = Partial(flags: flags)
        }
        partial.payload += slice
        partial.bytesReceived += wireBytes

        guard flags.hasMoreComing else { return [finish(partial, type: type, number: number)] }
        var events: [Event] = []
        if partial.bytesReceived - partial.bytesAcknowledged > Self.acknowledgementThreshold {
            partial.bytesAcknowledged = partial.bytesReceived
            events.append(
                .acknowledgement(
                    BLIPFrameWriter.acknowledgement(
                        ofResponse: type.isResponse, number: number, bytesReceived: partial.bytesReceived)))
        }
        partials[key] = partial
        return events
    }

    /// The message a last frame completes, or why it cannot be read.
    private func finish(_ partial: Partial, type: BLIPMessageType, number: UInt64) -> Event {
        var payload = ByteBuffer(bytes: partial.payload)
        do throws(BLIPError) {
            let length = try BLIPVarint.read(from: &payload)
            guard length <= UInt64(payload.readableBytes) else {
                throw .badProperties("the properties' length runs past the message")
            }
            guard let block = payload.readBytes(length: Int(length)) else { throw .badProperties("truncated") }
            let properties = try BLIPProperties(decoding: block)
            // Message-level flags come from the message's first frame.
            return .message(
                BLIPMessage(
                    type: type, number: number, properties: properties, body: Array(payload.readableBytesView),
                    isUrgent: partial.flags.isUrgent, isNoReply: partial.flags.isNoReply,
                    isCompressed: partial.flags.isCompressed))
        } catch {
            let failure: BLIPError = error == .badVarint ? .badProperties("bad properties length") : error
            return .badMessage(type: type, number: number, error: failure)
        }
    }
}
