// MARK: - BLIPMessageType

/// The kind of a BLIP frame: the low three bits of its flags (spec: blip-sync-protocol.md §2.3).
public enum BLIPMessageType: UInt8, Sendable, Hashable, CaseIterable {
    /// A request.
    case request = 0
    /// A successful response.
    case response = 1
    /// An error response.
    case error = 2
    /// Acknowledges bytes of an incoming request (flow control).
    case acknowledgeRequest = 4
    /// Acknowledges bytes of an incoming response (flow control).
    case acknowledgeResponse = 5

    /// Whether frames of this type are flow-control acknowledgements (no payload, no checksum).
    public var isAcknowledgement: Bool {
        self == .acknowledgeRequest || self == .acknowledgeResponse
    }

    /// Whether this is a response (`RPY` or `ERR`), numbered after the request it answers.
    public var isResponse: Bool {
        self == .response || self == .error
    }

    /// The short name the protocol documents use (`MSG`, `RPY`, `ERR`, `ACKMSG`, `ACKRPY`).
    public var name: String {
        switch self {
        case .request: "MSG"
        case .response: "RPY"
        case .error: "ERR"
        case .acknowledgeRequest: "ACKMSG"
        case .acknowledgeResponse: "ACKRPY"
        }
    }
}
