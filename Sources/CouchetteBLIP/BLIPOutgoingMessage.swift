// MARK: - BLIPOutgoingMessage

/// A message being sent: its encoded payload and how much of it went out in frames so far.
public struct BLIPOutgoingMessage: Sendable {
    /// The message.
    public let message: BLIPMessage
    /// Properties length, properties and body, before framing.
    let payload: [UInt8]
    /// How many payload bytes earlier frames carried.
    var offset = 0
    /// Whether a frame was sent (an empty payload still takes one).
    var hasStarted = false
    /// Bytes after the frame headers sent so far (payload as sent, plus checksums): what the peer's
    /// acknowledgements count (spec: blip-sync-protocol.md §2.8).
    public internal(set) var bytesSent: UInt64 = 0

    /// Prepares `message` for sending.
    ///
    /// - Throws: ``BLIPError`` when its properties cannot be encoded.
    public init(_ message: BLIPMessage) throws(BLIPError) {
        self.message = message
        payload = try message.payload()
    }

    /// Whether every frame was sent.
    public var isFinished: Bool { hasStarted && offset == payload.count }

    /// The payload bytes not sent yet.
    public var remainingBytes: Int { payload.count - offset }
}
