// MARK: - SyncSessionObserver

/// What a ``PassiveSyncSession`` tells of its connection (the gateway logs it as Sync Gateway does; every method does
/// nothing unless implemented).
public protocol SyncSessionObserver: Sendable {
    /// The connection opened with `subprotocol`.
    func opened(subprotocol: String)
    /// The connection closed.
    func closed()
    /// A message worth telling of (a subscription, a proposal).
    func message(_ text: String)
    /// A pushed revision was stored.
    func notePushed()
    /// `count` revisions of a batch were sent.
    func notePulled(_ count: Int)
}

extension SyncSessionObserver {
    public func opened(subprotocol: String) {}
    public func closed() {}
    public func message(_ text: String) {}
    public func notePushed() {}
    public func notePulled(_ count: Int) {}
}
