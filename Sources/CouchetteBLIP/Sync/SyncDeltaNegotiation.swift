// MARK: - SyncDeltaNegotiation

/// Whether the client of one connection takes revisions as JSON deltas: it says so once, with `deltas: true` on a
/// reply to `changes` (spec: blip-sync-protocol.md §4.1), and the connection remembers it.
actor SyncDeltaNegotiation {
    /// Whether the client announced deltas.
    private(set) var clientAcceptsDeltas = false

    /// Notes a `changes` reply's `deltas` property.
    func noteReply(deltas: String?) {
        if deltas == "true" { clientAcceptsDeltas = true }
    }
}
