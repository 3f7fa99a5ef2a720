// MARK: - Settings shared by gateway nodes

/// Several gateway nodes serving one storage (PostgreSQL) share the settings deployed through the admin API: the
/// sync function, `revs_limit` and whether the database is offline. The node that changes them stores them as a new
/// version (``GatewayStorage/shareSettings(_:)``); every node applies each newer version when it hears of it, at once
/// by the commit's notification or within the storage's poll interval. Storages one process serves share nothing.
extension GatewayDatabase {
    /// Stores this node's current settings for every node.
    func shareSettings() throws(GatewayError) {
        let (config, state) = mutable.withLock { ($0.config, $0.state) }
        let settings = SharedDatabaseSettings(sync: config.sync, revsLimit: config.revsLimit, offline: state == .offline)
        let version = try storage.shareSettings(settings)
        mutable.withLock { $0.settingsVersion = max($0.settingsVersion, version) }
    }

    /// Loads and applies the shared settings when `version` says they changed since this node last applied them.
    func noteSharedSettings(_ version: UInt64?) {
        guard let version, version > mutable.withLock({ $0.settingsVersion }) else { return }
        guard let settings = try? storage.sharedSettings() else { return }
        applySharedSettings(settings)
    }

    /// Applies settings another node shared, unless this node already runs them or later ones.
    func applySharedSettings(_ settings: SharedDatabaseSettings) {
        let newer = mutable.withLock { mutable in
            guard settings.version > mutable.settingsVersion else { return false }
            mutable.settingsVersion = settings.version
            return true
        }
        guard newer else { return }
        var config = self.config
        config.sync = settings.sync
        config.revsLimit = settings.revsLimit
        // A function another node compiled compiles here too: the same engine runs it.
        try? applyLocally(config)
        switch (state, settings.offline) {
        case (.online, true): setState(.offline)
        case (.offline, false), (.stopping, false): setState(.online)
        default: break
        }
    }
}
