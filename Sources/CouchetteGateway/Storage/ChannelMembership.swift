// MARK: - ChannelMembership

/// A document's standing in one channel, as the storage records it for channel-filtered changes feeds: the
/// sequence of its last change while in the channel, or of its leaving it.
///
/// ```swift
/// try storage.channelMemberships(documentID: "doc1")
/// // ["public": ChannelMembership(sequence: 7, removed: false), "old": ChannelMembership(sequence: 5, removed: true)]
/// ```
///
/// `GET /{db}/_raw/{doc}` reports it as the `_sync.channels` map (spec: gateway-rest-api.md §16).
public struct ChannelMembership: Sendable, Hashable {
    /// The sequence of the document's last change in the channel, or of its leaving it.
    public var sequence: UInt64

    /// Whether the document has left the channel.
    public var removed: Bool

    /// Creates a membership record.
    public init(sequence: UInt64, removed: Bool) {
        self.sequence = sequence
        self.removed = removed
    }
}
