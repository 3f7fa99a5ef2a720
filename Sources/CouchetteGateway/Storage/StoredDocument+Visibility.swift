import CouchetteCore

// MARK: - Visibility

extension StoredDocument {
    /// The channels that decide who may read `revision`: its own channels, and for a tombstone also those of its
    /// parent, so that everyone who saw a document sees its deletion (spec: sync-function.md §7).
    public func visibilityChannels(of revision: RevisionID) -> Set<String> {
        var channels = self.channels[revision] ?? []
        if let node = tree[revision], node.isDeleted, let parent = node.parent {
            channels.formUnion(self.channels[parent] ?? [])
        }
        return channels
    }

    /// The channels that decide who may read the current revision.
    public var currentVisibilityChannels: Set<String> {
        winner.map { visibilityChannels(of: $0.id) } ?? []
    }
}
