import CouchetteBLIP
import CouchetteCore
import Synchronization

// MARK: - BLIPSessionLog

/// What one BLIP sync connection says in the log, as Sync Gateway's do: its opening and its end under `HTTP` (on by
/// default), with the user and how many revisions went each way; its subscriptions and checkpoints under `SyncMsg`;
/// each batch under `Sync`. Lines carry the connection's `c:[id]`.
///
/// ```
/// HTTP: c:[1f3a9c02] Upgraded to WebSocket protocol BLIP_3+CBMobile_3 (as alice)
/// SyncMsg: c:[1f3a9c02] subChanges since 0 (continuous, activeOnly)
/// HTTP: c:[1f3a9c02] --> BLIP+WebSocket connection closed: pushed 3, pulled 120 revisions
/// ```
final class BLIPSessionLog: SyncSessionObserver {
    /// The connection's ID in log lines.
    let id: String
    /// Who the connection is for (`GUEST` when anonymous; never a secret).
    let user: String
    private let log: GatewayLog
    private let counts = Mutex((pushed: 0, pulled: 0))

    init(log: GatewayLog, user: String) {
        self.log = log
        self.user = user
        id = RandomHex.make(bytes: 4)
    }

    func opened(subprotocol: String) {
        log(LogKeys.http, "c:[\(id)] Upgraded to WebSocket protocol \(subprotocol) (as \(user))")
    }

    func closed() {
        let (pushed, pulled) = counts.withLock { ($0.pushed, $0.pulled) }
        log(LogKeys.http, "c:[\(id)] --> BLIP+WebSocket connection closed: pushed \(pushed), pulled \(pulled) revisions")
    }

    /// A message worth a line under `SyncMsg` (a subscription, a checkpoint, a proposal).
    func message(_ text: String) {
        log(LogKeys.syncMessages, "c:[\(id)] \(text)")
    }

    /// A revision stored from the client.
    func notePushed() {
        counts.withLock { $0.pushed += 1 }
    }

    /// A batch of `count` revisions sent to the client.
    func notePulled(_ count: Int) {
        guard count > 0 else { return }
        counts.withLock { $0.pulled += count }
        log(LogKeys.sync, "c:[\(id)] Sent \(count) revisions to the client")
    }
}
