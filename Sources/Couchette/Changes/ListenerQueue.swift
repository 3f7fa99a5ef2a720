import Foundation

// MARK: - ListenerQueue

/// Where listeners run: the queue the app gave, or else a private serial queue of their own (not the main queue,
/// which a server or a command-line program may never drain), as lite-api.md says for every `withQueue:`.
enum ListenerQueue {
    /// `queue`, or a new private serial queue.
    static func resolve(_ queue: DispatchQueue?) -> DispatchQueue {
        queue ?? DispatchQueue(label: "couchette.listener")
    }
}
