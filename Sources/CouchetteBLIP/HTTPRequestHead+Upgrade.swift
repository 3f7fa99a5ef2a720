import NIOHTTP1

// MARK: - HTTPRequestHead + Upgrade

extension HTTPRequestHead {
    /// Whether the request asks for a protocol upgrade (`Connection: upgrade`, as a WebSocket handshake does): what
    /// the ``ConnectionGuard`` leaves a connection for, the ``UpgradeGate`` looks at, and a ``DetachingGate`` rule
    /// must not take.
    public var asksForUpgrade: Bool {
        headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
    }
}
