import Couchette
import Foundation

/// Something the app's loop reacts to.
enum AppEvent: Sendable {
    /// A key in the full-screen app.
    case key(Key)
    /// A command line in the line mode.
    case line(String)
    /// The end of standard input.
    case endOfInput
    /// A live query's rows changed.
    case dataChanged
    /// The conflicts query found documents to resolve.
    case conflictsFound
    /// The replicator of the session with this ``TodoSession/id`` changed state.
    case sync(SyncState, session: UUID)
}

/// A logged-in user's database with what runs on it: the live queries the screens show, the conflict watcher and
/// the replicator. Used from the app's loop only; the live queries and the replicator tell it about changes
/// through `notify`.
final class TodoSession {
    /// Tells this session's events from those of an earlier one (a logout and a new login).
    let id = UUID()
    let store: TodoStore
    let username: String
    /// The login password (nil without the login flow): the replicator's credentials, the database key with
    /// encryption.
    let password: String?
    private(set) var syncState = SyncState()
    private let notify: @Sendable (AppEvent) -> Void
    private let lists: LiveQuery
    private let counts: LiveQuery
    private let conflicts: LiveQuery?
    private var sync: TodoSync?
    private var tokens: [ListenerToken] = []
    /// The list shown on the tasks screen, with its live queries.
    private(set) var openList: (list: TaskList, tasks: LiveQuery, users: LiveQuery, tokens: [ListenerToken])?

    init(
        database: Database, username: String, password: String?, settings: TodoSettings,
        notify: @escaping @Sendable (AppEvent) -> Void
    ) throws {
        store = try TodoStore(database: database, username: username)
        self.username = username
        self.password = password
        self.notify = notify
        lists = store.listsQuery()
        counts = store.incompleteCountsQuery()
        conflicts = settings.conflictResolution ? store.conflictsQuery() : nil
        for live in [lists, counts] { tokens.append(live.addChangeListener { _ in notify(.dataChanged) }) }
        if let conflicts {
            tokens.append(conflicts.addChangeListener { rows in if rows.count > 0 { notify(.conflictsFound) } })
        }
        if settings.sync {
            let id = id
            sync = try TodoSync(
                database: database, url: settings.gateway, username: settings.login ? username : nil,
                password: settings.login ? password : nil
            ) { state in notify(.sync(state, session: id)) }
        }
    }

    /// The lists with their incomplete-task counts, as the live queries last saw them.
    var taskLists: [TaskList] { TodoStore.lists(lists.rows, counts: counts.rows) }

    /// The open list's tasks.
    var tasks: [TodoTask] { TodoStore.tasks(openList?.tasks.rows) }

    /// The users the open list is shared with.
    var sharedWith: [String] { TodoStore.users(openList?.users.rows) }

    /// The lists as the database has them now (the queries run at once, not waiting for the live ones).
    func taskListsNow() throws -> [TaskList] {
        TodoStore.lists(try lists.query.run(), counts: try counts.query.run())
    }

    /// The open list's tasks and users as the database has them now.
    func openListNow() throws -> (tasks: [TodoTask], users: [String]) {
        guard let openList else { return ([], []) }
        return (TodoStore.tasks(try openList.tasks.query.run()), TodoStore.users(try openList.users.query.run()))
    }

    /// How many documents are in conflict now (0 without conflict resolution: nothing watches them).
    func conflictCountNow() -> Int {
        (try? conflicts?.query.run().count) ?? 0
    }

    /// The open list as it is now (renamed, or nil when deleted).
    var currentOpenList: TaskList? {
        guard let open = openList?.list else { return nil }
        return taskLists.first { $0.id == open.id }
    }

    func open(_ list: TaskList) {
        closeList()
        let tasks = store.tasksQuery(listID: list.id)
        let users = store.usersQuery(listID: list.id)
        let notify = notify
        let tokens = [tasks, users].map { $0.addChangeListener { _ in notify(.dataChanged) } }
        openList = (list, tasks, users, tokens)
    }

    func closeList() {
        guard let openList else { return }
        openList.tokens.forEach { $0.remove() }
        openList.tasks.stop()
        openList.users.stop()
        self.openList = nil
    }

    /// Records the replicator's new state; returns whether it is a new 401 (the password changed on the gateway).
    func record(_ state: SyncState) -> Bool {
        let isNewUnauthorized = state.unauthorized && !syncState.unauthorized
        syncState = state
        return isNewUnauthorized
    }

    /// Resolves the conflicts the watcher sees now.
    @discardableResult
    func resolveConflicts() -> Int {
        guard let rows = conflicts?.rows else { return 0 }
        return TodoConflicts.resolve(rows, in: store.database)
    }

    /// Stops syncing and the queries, and closes the database ("logout").
    func close() {
        sync?.stop()
        sync = nil
        closeList()
        tokens.forEach { $0.remove() }
        tokens = []
        [lists, counts].forEach { $0.stop() }
        conflicts?.stop()
        try? store.database.close()
    }
}
