import Synchronization

// MARK: - BLIPSubscriptions

/// The `subChanges` subscriptions of one BLIP connection, which hold no task while idle and so must be stopped when
/// the connection ends (``BLIPPullFeed/stop()``).
final class BLIPSubscriptions: Sendable {
    private let feeds = Mutex<[BLIPPullFeed]>([])

    /// Keeps `feed` until ``stopAll()``; subscriptions already over are let go.
    func add(_ feed: BLIPPullFeed) {
        feeds.withLock { feeds in
            feeds.removeAll { $0.isOver }
            feeds.append(feed)
        }
    }

    /// Stops every subscription (the connection ended).
    func stopAll() {
        for feed in feeds.withLock({ $0 }) { feed.stop() }
    }
}
