// MARK: - ChannelCount

/// A channel and how many documents are in it now.
public struct ChannelCount: Sendable, Hashable {
    /// The channel.
    public var channel: String
    /// How many documents' current revisions are in it.
    public var documents: Int

    public init(channel: String, documents: Int) {
        self.channel = channel
        self.documents = documents
    }
}
