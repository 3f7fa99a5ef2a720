import Synchronization

// MARK: - SyncSubscriptions

/// The `subChanges` subscriptions of one BLIP connection, which hold no task while idle and so must be stopped when
/// the connection ends (``SyncPullFeed/stop()``).
final class SyncSubscriptions: Sendable {
    private let feeds = Mutex<(running: [SyncPullFeed], stopped: Bool)>(([], false))

    /// Keeps `feed` until ``stopAll()``; subscriptions already over are let go. After ``stopAll()`` (a `subChanges`
    /// still being answered when the connection ended), `feed` is stopped at once.
    func add(_ feed: SyncPullFeed) {
        let keeps = feeds.withLock { feeds in
            guard !feeds.stopped else { return false }
            feeds.running.removeAll { $0.isOver }
            feeds.running.append(feed)
            return true
        }
        if !keeps { feed.stop() }
    }

    /// Stops every subscription and lets them go (the connection ended): a feed holds the connection, whose handler
    /// holds the session and so this list.
    func stopAll() {
        let stopped = feeds.withLock { feeds in
            defer { feeds = ([], true) }
            return feeds.running
        }
        for feed in stopped { feed.stop() }
    }
}
