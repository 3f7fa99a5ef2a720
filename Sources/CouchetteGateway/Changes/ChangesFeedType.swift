// MARK: - ChangesFeedType

/// How a `_changes` request delivers its entries (`feed`, spec: gateway-rest-api.md §11.1, §11.3, §11.4).
public enum ChangesFeedType: String, Sendable, Hashable, CaseIterable {
    /// One JSON response with the entries available now.
    case normal
    /// One JSON response, sent as soon as at least one entry is available (or on timeout, empty).
    case longpoll
    /// A stream of entries, one JSON object per line, with `\n` heartbeats.
    case continuous
    /// A WebSocket carrying JSON arrays of entries (`[]` once caught up, empty heartbeat messages).
    case websocket

    /// Whether the feed keeps running after it caught up.
    public var isStreaming: Bool {
        self == .continuous || self == .websocket
    }
}
