import Couchette
import Foundation

/// "Adding Synchronization": continuous push and pull with the gateway's Todo database, with the user's name and
/// password ("Replications with Authentication"). Reports the replicator's activity, progress and last error; a 401
/// means the password changed on the gateway (seed 000).
final class TodoSync: Sendable {
    let replicator: Replicator
    private let listening: Task<Void, Never>

    /// Starts replicating `database` with `url` (the gateway's public URL of the database, e.g.
    /// `http://localhost:4984/todo/`), reporting each status change to `report`.
    init(database: Database, url: URL, username: String?, password: String?, report: @escaping @Sendable (SyncState) -> Void) throws {
        var config = ReplicatorConfiguration(target: URLEndpoint(url: url))
        // No conflict resolver: conflicts stay in the database for the app's (the tutorial's "Resolve Conflicts").
        config.addCollection(try database.defaultCollection())
        config.continuous = true
        // Back online within seconds of the gateway's return.
        config.maxAttemptWaitTime = 5
        if let username, let password {
            config.authenticator = BasicAuthenticator(username: username, password: password)
        }
        let replicator = Replicator(config: config)
        self.replicator = replicator
        let changes = replicator.changes()
        listening = Task {
            for await change in changes { report(Self.state(change.status)) }
        }
        report(Self.state(replicator.status))
        replicator.start()
    }

    func stop() {
        replicator.stop()
        listening.cancel()
    }

    static func state(_ status: Replicator.Status) -> SyncState {
        var state = SyncState()
        state.activity =
            switch status.activity {
            case .stopped: .stopped
            case .offline: .offline
            case .connecting: .connecting
            case .idle: .idle
            case .busy: .busy
            }
        state.completed = status.progress.completed
        state.total = status.progress.total
        if let error = status.error {
            state.lastError = "\(error.status) \(error.message)"
            state.unauthorized = error.status == 401
        }
        return state
    }
}
