import Foundation

/// A `task-list` document as the lists screen shows it, with its count of incomplete tasks.
struct TaskList: Equatable, Sendable {
    /// `{owner}.{uuid}`, as the tutorial's document IDs.
    let id: String
    let name: String
    let owner: String
    /// From the `list/incompleteTasksCount` view (map/reduce, `groupLevel` 1).
    var incompleteCount: Int
}

/// A `task` document.
struct TodoTask: Equatable, Sendable {
    let id: String
    let task: String
    let complete: Bool
    /// ISO-8601, so that string order is time order.
    let createdAt: String
    /// Whether it has its `image` attachment.
    let hasImage: Bool
}

/// How the app's replicator is doing, for the status line.
struct SyncState: Equatable, Sendable {
    enum Activity: String, Sendable { case off, stopped, offline, connecting, idle, busy }
    var activity: Activity = .off
    var completed: UInt64 = 0
    var total: UInt64 = 0
    var lastError: String?
    /// The gateway answered 401: the password changed (seed 000).
    var unauthorized = false

    var line: String {
        var text = "Sync: \(activity.rawValue)"
        if activity != .off { text += " \(completed)/\(total)" }
        if let lastError { text += " · last error: \(lastError)" }
        return text
    }
}
