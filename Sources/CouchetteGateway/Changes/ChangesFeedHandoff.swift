import Synchronization

// MARK: - ChangesFeedHandoff

/// Where a `_changes` handler leaves a continuous feed for the ``ContinuousFeedDetacher`` that runs its request,
/// instead of streaming it from a response body: the detacher writes the response's head, then the feed goes on
/// as a ``DetachedChangesFeed`` without the connection's task.
///
/// Requests Hummingbird serves have none (``GatewayRequestContext/feedHandoff`` is nil), and their feeds stream as
/// response bodies.
final class ChangesFeedHandoff: Sendable {
    private let feed = Mutex<ChangesFeed?>(nil)

    /// Leaves `feed` for the detacher.
    func hold(_ feed: ChangesFeed) {
        self.feed.withLock { $0 = feed }
    }

    /// The feed left by the handler, if any; nil after the first call.
    func take() -> ChangesFeed? {
        feed.withLock { $0.take() }
    }
}
