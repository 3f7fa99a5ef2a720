import Couchette
import Foundation

/// The app without the full screen, for scripts: one command per line on standard input, one answer per line on
/// standard output (`help` lists them). Lists and tasks are numbered as `lists` and `tasks N` print them.
final class LineModeApp {
    private enum Wait {
        case idle
        case list(String)
        case task(list: Int, text: String)
        case noConflicts
    }

    private let settings: TodoSettings
    private let accounts: TodoAccounts
    private let events: AsyncStream<AppEvent>
    private let send: AsyncStream<AppEvent>.Continuation
    private var session: TodoSession?
    private var waiting: Wait?
    private var queued: [String] = []
    private var quitting = false

    init(settings: TodoSettings) {
        self.settings = settings
        accounts = settings.accounts
        (events, send) = AsyncStream.makeStream(of: AppEvent.self)
    }

    func run() async throws {
        let send = send
        Thread {
            while let line = readLine() { send.yield(.line(line)) }
            send.yield(.endOfInput)
        }.start()
        if !settings.login { await logIn("todo", password: nil) }
        say("ready")
        for await event in events {
            await handle(event)
            if quitting { break }
        }
        session?.close()
    }

    private func handle(_ event: AppEvent) async {
        switch event {
        case .line(let line):
            if waiting != nil { queued.append(line) } else { await run(line) }
        case .endOfInput:
            if waiting == nil { quitting = true } else { queued.append("quit") }
        case .conflictsFound:
            if let resolved = session?.resolveConflicts(), resolved > 0 { say("resolved \(resolved) conflict(s)") }
        case .sync(let state, let id):
            guard let session, session.id == id else { return }
            if session.record(state) {
                say("Authentication Error: Your username or password is not correct.")
                logOut()
            }
        case .dataChanged, .key: break
        }
        await resumeIfReady()
    }

    /// Ends a wait whose condition now holds and runs the lines that came meanwhile.
    private func resumeIfReady() async {
        while let wait = waiting, isSatisfied(wait) {
            waiting = nil
            say("ok")
            while waiting == nil, !queued.isEmpty, !quitting { await run(queued.removeFirst()) }
        }
    }

    private func isSatisfied(_ wait: Wait) -> Bool {
        guard let session else { return false }
        switch wait {
        case .idle:
            let state = session.syncState
            return state.activity == .idle && state.completed == state.total
        case .list(let name):
            return (try? session.taskListsNow())?.contains { $0.name == name } ?? false
        case .noConflicts:
            return session.conflictCountNow() == 0
        case .task(let index, let text):
            let lists = (try? session.taskListsNow()) ?? []
            guard lists.indices.contains(index - 1) else { return false }
            let tasks = TodoStore.tasks(try? session.store.tasksQuery(listID: lists[index - 1].id).query.run())
            return tasks.contains { $0.task == text }
        }
    }

    // MARK: - Commands

    private func run(_ line: String) async {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let command = words.first else { return }
        let arguments = Array(words.dropFirst())
        do {
            if command == "quit" || command == "exit" {
                quitting = true
                return
            }
            if command == "help" { return say(Self.help) }
            if ["login", "migrate", "reset"].contains(command) { return try await account(command, arguments) }
            guard let session else { throw TodoError.usage("Log in first: login USER PASSWORD") }
            try run(command, arguments, in: session)
        } catch {
            say("error: \(TodoError.from(error))")
        }
    }

    private func account(_ command: String, _ arguments: [String]) async throws {
        session?.close()
        session = nil
        switch (command, arguments.count) {
        case ("login", 2): await logIn(arguments[0], password: arguments[1])
        case ("migrate", 3):
            let database = try accounts.migrate(arguments[0], from: arguments[1], to: arguments[2])
            await start(database, arguments[0], password: arguments[2])
        case ("reset", 2):
            try accounts.delete(arguments[0])
            await logIn(arguments[0], password: arguments[1])
        default: throw TodoError.usage("Usage: login USER PASSWORD · migrate USER OLD NEW · reset USER PASSWORD")
        }
    }

    private func run(_ command: String, _ arguments: [String], in session: TodoSession) throws {
        let store = session.store
        func list(_ index: Int = 0) throws -> TaskList {
            let lists = try session.taskListsNow()
            guard arguments.count > index, let number = Int(arguments[index]), lists.indices.contains(number - 1)
            else { throw TodoError.notFound("such list (see lists)") }
            return lists[number - 1]
        }
        func task() throws -> (TaskList, TodoTask) {
            let list = try list()
            session.open(list)
            let tasks = try session.openListNow().tasks
            guard arguments.count > 1, let number = Int(arguments[1]), tasks.indices.contains(number - 1) else {
                throw TodoError.notFound("such task (see tasks \(arguments[0]))")
            }
            return (list, tasks[number - 1])
        }
        func text(from index: Int) throws -> String {
            let text = arguments.dropFirst(index).joined(separator: " ")
            guard !text.isEmpty else { throw TodoError.usage("\(command): text missing") }
            return text
        }
        switch command {
        case "lists":
            let lists = try session.taskListsNow()
            say(lists.isEmpty ? "no lists" : lists.enumerated().map { index, list in
                let owner = list.owner == session.username ? "" : " (\(list.owner)'s)"
                return "\(index + 1). \(list.name)\(owner) · \(list.incompleteCount)"
            }.joined(separator: "\n"))
        case "add-list": try store.createList(name: try text(from: 0)); say("ok")
        case "rename-list": try store.renameList(id: try list().id, to: try text(from: 1)); say("ok")
        case "delete-list": try store.deleteList(id: try list().id); say("ok")
        case "share": try store.share(try list(), with: try text(from: 1)); say("ok")
        case "unshare": try store.unshare(try list(), with: try text(from: 1)); say("ok")
        case "moderator": try store.makeModerator(try text(from: 0)); say("ok")
        case "conflict-list": try store.makeListConflict(id: try list().id); say("ok")
        case "tasks":
            let list = try list()
            session.open(list)
            let (tasks, shared) = try session.openListNow()
            say((shared.isEmpty ? "" : "shared with: \(shared.joined(separator: ", "))\n") + (tasks.isEmpty ? "no tasks" : tasks.enumerated().map { index, task in
                "\(index + 1). [\(task.complete ? "x" : " ")] \(task.task)\(task.hasImage ? " [image]" : "")"
            }.joined(separator: "\n")))
        case "add-task": try store.createTask(try text(from: 1), in: try list()); say("ok")
        case "edit-task": try store.editTask(id: try task().1.id, text: try text(from: 2)); say("ok")
        case "complete", "uncomplete":
            try store.setComplete(id: try task().1.id, command == "complete")
            say("ok")
        case "delete-task": try store.deleteTask(id: try task().1.id); say("ok")
        case "image": try store.attachImage(taskID: try task().1.id, path: try text(from: 2)); say("ok")
        case "conflict-task": try store.makeTaskConflict(id: try task().1.id); say("ok")
        case "status": say(session.syncState.line)
        case "wait-idle": waiting = .idle
        case "wait-list": waiting = .list(try text(from: 0))
        case "wait-resolved": waiting = .noConflicts
        case "wait-task":
            guard let number = arguments.first.flatMap(Int.init) else { throw TodoError.usage("wait-task N TEXT") }
            waiting = .task(list: number, text: try text(from: 1))
        case "logout": logOut(); say("ok")
        default: throw TodoError.usage("Unknown command \(command) (try help)")
        }
    }

    // MARK: - Sessions

    private func logIn(_ username: String, password: String?) async {
        do {
            await start(try accounts.open(username, password: password), username, password: password)
        } catch TodoError.wrongPassword where accounts.exists(username) {
            say("error: Wrong password. If it changed on the gateway: migrate \(username) OLD NEW, or reset \(username) NEW")
        } catch {
            say("error: \(TodoError.from(error))")
        }
    }

    private func start(_ database: Database, _ username: String, password: String?) async {
        do {
            let send = send
            let session = try TodoSession(
                database: database, username: username, password: password, settings: settings
            ) { send.yield($0) }
            self.session = session
            if settings.login { say("logged in as \(username)") }
        } catch {
            try? database.close()
            say("error: \(TodoError.from(error))")
        }
    }

    private func logOut() {
        session?.close()
        session = nil
        waiting = nil
    }

    private func say(_ text: String) { writeToStandardOutput(text + "\n") }

    private static let help = """
        login USER PASSWORD · migrate USER OLD NEW · reset USER PASSWORD · logout · quit
        lists · add-list NAME · rename-list N NAME · delete-list N · share N USER · unshare N USER · moderator USER
        tasks N · add-task N TEXT · edit-task N M TEXT · complete N M · uncomplete N M · delete-task N M · image N M FILE
        conflict-list N · conflict-task N M (the tutorial's shake gesture) · status · wait-idle · wait-list NAME · wait-task N TEXT · wait-resolved
        """
}
