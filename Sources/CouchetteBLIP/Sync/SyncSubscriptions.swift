import Synchronization

// MARK: - SyncSubscriptions

/// The `subChanges` subscriptions of one BLIP connection, which hold no task while idle and so must be stopped when
/// the connection ends (``SyncPullFeed/stop()``).
final class SyncSubscriptions: Sendable {
    private let feeds = Mutex<[SyncPullFeed]>([])

    /// Keeps `feed` until ``stopAll()``; subscriptions already over are let go.
    func add(_ feed: SyncPullFeed) {
        feeds.withLock { feeds in
            feeds.removeAll { $0.isOver }
            feeds.append(feed)
        }
    }

    /// Stops every subscription and lets them go (the connection ended): a feed holds the connection, whose handler
    /// holds the session and so this list.
    func stopAll() {
        let stopped = feeds.withLock { feeds in
            defer { feeds = [] }
            return feeds
        }
        for feed in stopped { feed.stop() }
    }
}
