// MARK: - BLIPMessageKey

/// Which message in flight a frame or an acknowledgement belongs to: requests and responses are numbered apart (a
/// response carries its request's number), so `MSG #1` and `RPY #1` are different messages (spec:
/// blip-sync-protocol.md §2.1).
struct BLIPMessageKey: Hashable, Sendable {
    /// Whether the message is a response (`RPY` or `ERR`).
    let isResponse: Bool
    /// The message's number.
    let number: UInt64
}

extension BLIPMessage {
    /// The message's key among those in flight.
    var key: BLIPMessageKey { BLIPMessageKey(isResponse: type.isResponse, number: number) }
}
