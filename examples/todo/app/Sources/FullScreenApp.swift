import Couchette
import Foundation

/// The app in a full-screen terminal: a login screen (with `--login`), the lists screen, a list's tasks screen;
/// prompts and dialogs at the bottom; a status line with the replicator's state. It redraws after every key and
/// every change the live queries and the replicator report.
final class FullScreenApp {
    private enum Screen { case login, lists, tasks }

    /// A line of text being typed at the bottom of the screen.
    private struct Prompt {
        var title: String
        var text = ""
        var secret = false
        var submit: (String) throws -> Void
    }

    /// A message that waits for Enter.
    private struct Dialog {
        var title: String
        var lines: [String]
        var close: () -> Void = {}
    }

    /// Seed 000's "Password Changed" popup: the typed password does not open the database.
    private struct PasswordChange {
        var username: String
        var newPassword: String
        var oldPassword = ""
    }

    private struct LoginForm {
        var username = ""
        var password = ""
        var onPassword = false
    }

    private let settings: TodoSettings
    private let accounts: TodoAccounts
    private let terminal = Terminal()
    private let events: AsyncStream<AppEvent>
    private let send: AsyncStream<AppEvent>.Continuation
    private var screen = Screen.login
    private var session: TodoSession?
    private var selection = 0
    private var prompt: Prompt?
    private var dialog: Dialog?
    private var passwordChange: PasswordChange?
    private var loginForm = LoginForm()
    private var notice: String?
    private var quitting = false

    init(settings: TodoSettings) {
        self.settings = settings
        accounts = settings.accounts
        (events, send) = AsyncStream.makeStream(of: AppEvent.self)
    }

    func run() async throws {
        try terminal.enterFullScreen()
        defer { terminal.restore() }
        let send = send
        Key.readKeys { key in send.yield(key.map(AppEvent.key) ?? .endOfInput) }
        if !settings.login { logIn(username: "todo", password: nil) }
        render()
        for await event in events {
            handle(event)
            if quitting { break }
            render()
        }
        session?.close()
    }

    // MARK: - Events

    private func handle(_ event: AppEvent) {
        switch event {
        case .key(let key): handle(key)
        case .endOfInput: quitting = true
        case .line: break
        case .dataChanged:
            if screen == .tasks, session?.currentOpenList == nil { leaveTasks() }
        case .conflictsFound:
            if let resolved = session?.resolveConflicts(), resolved > 0 { notice = "Resolved \(resolved) conflict(s)" }
        case .sync(let state, let id):
            guard let session, session.id == id, session.record(state) else { return }
            // Seed 000: a 401 from the replicator means the password changed on the gateway.
            dialog = Dialog(
                title: "Authentication Error", lines: ["Your username or password is not correct."],
                close: { [weak self] in self?.logOut() })
        }
    }

    private func handle(_ key: Key) {
        notice = nil
        if dialog != nil {
            if key == .enter || key == .escape {
                let close = dialog?.close
                dialog = nil
                close?()
            }
            return
        }
        if prompt != nil { return handlePrompt(key) }
        if passwordChange != nil { return handlePasswordChange(key) }
        switch screen {
        case .login: handleLogin(key)
        case .lists: handleLists(key)
        case .tasks: handleTasks(key)
        }
    }

    private func handlePrompt(_ key: Key) {
        switch key {
        case .escape: prompt = nil
        case .backspace: _ = prompt?.text.popLast()
        case .character(let character): prompt?.text.append(character)
        case .enter:
            guard let current = prompt else { return }
            prompt = nil
            let text = current.text.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { return }
            attempt { try current.submit(text) }
        default: break
        }
    }

    private func handleLogin(_ key: Key) {
        switch key {
        case .tab, .up, .down: loginForm.onPassword.toggle()
        case .backspace:
            if loginForm.onPassword { _ = loginForm.password.popLast() } else { _ = loginForm.username.popLast() }
        case .character(let character):
            if loginForm.onPassword { loginForm.password.append(character) } else { loginForm.username.append(character) }
        case .enter:
            if !loginForm.onPassword {
                loginForm.onPassword = true
            } else if !loginForm.username.isEmpty, !loginForm.password.isEmpty {
                logIn(username: loginForm.username, password: loginForm.password)
            }
        case .escape, .control("c"): quitting = true
        default: break
        }
    }

    private func handlePasswordChange(_ key: Key) {
        guard var change = passwordChange else { return }
        switch key {
        case .escape:
            passwordChange = nil
        case .backspace:
            _ = change.oldPassword.popLast()
            passwordChange = change
        case .character(let character):
            change.oldPassword.append(character)
            passwordChange = change
        case .enter:  // Migrate
            do {
                let database = try accounts.migrate(change.username, from: change.oldPassword, to: change.newPassword)
                passwordChange = nil
                start(database, username: change.username, password: change.newPassword)
                notice = "Your data now opens with your new password"
            } catch {
                change.oldPassword = ""
                passwordChange = change
                notice = "That is not your old password either"
            }
        case .control("x"):  // Delete
            passwordChange = nil
            attempt {
                try accounts.delete(change.username)
                logIn(username: change.username, password: change.newPassword)
            }
        default: break
        }
    }

    private func handleLists(_ key: Key) {
        guard let session else { return }
        let lists = session.taskLists
        let selected = lists.indices.contains(selection) ? lists[selection] : nil
        switch key {
        case .up, .character("k"): selection = max(0, selection - 1)
        case .down, .character("j"): selection = min(max(0, lists.count - 1), selection + 1)
        case .enter, .right:
            if let selected {
                session.open(selected)
                screen = .tasks
                selection = 0
            }
        case .character("n"):
            prompt = Prompt(title: "New list name") { name in try session.store.createList(name: name) }
        case .character("r"):
            if let selected {
                prompt = Prompt(title: "Rename \"\(selected.name)\" to", text: selected.name) { name in
                    try session.store.renameList(id: selected.id, to: name)
                }
            }
        case .character("d"):
            if let selected { attempt { try session.store.deleteList(id: selected.id) } }
        case .character("s"):
            if let selected {
                prompt = Prompt(title: "Share \"\(selected.name)\" with user") { user in
                    try session.store.share(selected, with: user)
                }
            }
        case .character("m"):
            prompt = Prompt(title: "Make moderator (user name)") { user in try session.store.makeModerator(user) }
        case .character("c"):
            if let selected {
                attempt { try session.store.makeListConflict(id: selected.id) }
                notice = "Made a conflict on \"\(selected.name)\""
            }
        case .character("l"):
            if settings.login { logOut() }
        case .character("q"), .control("c"): quitting = true
        default: break
        }
    }

    private func handleTasks(_ key: Key) {
        guard let session, let list = session.currentOpenList else { return }
        let tasks = session.tasks
        let selected = tasks.indices.contains(selection) ? tasks[selection] : nil
        switch key {
        case .up, .character("k"): selection = max(0, selection - 1)
        case .down, .character("j"): selection = min(max(0, tasks.count - 1), selection + 1)
        case .escape, .left, .backspace, .character("h"): leaveTasks()
        case .character("n"):
            prompt = Prompt(title: "New task") { text in try session.store.createTask(text, in: list) }
        case .character("e"):
            if let selected {
                prompt = Prompt(title: "Edit task", text: selected.task) { text in
                    try session.store.editTask(id: selected.id, text: text)
                }
            }
        case .character(" "), .character("x"):
            if let selected { attempt { try session.store.setComplete(id: selected.id, !selected.complete) } }
        case .character("d"):
            if let selected { attempt { try session.store.deleteTask(id: selected.id) } }
        case .character("i"):
            if let selected {
                prompt = Prompt(title: "Image file for \"\(selected.task)\"") { path in
                    try session.store.attachImage(taskID: selected.id, path: path)
                }
            }
        case .character("s"):
            prompt = Prompt(title: "Share \"\(list.name)\" with user") { user in try session.store.share(list, with: user) }
        case .character("u"):
            prompt = Prompt(title: "Stop sharing \"\(list.name)\" with user") { user in
                try session.store.unshare(list, with: user)
            }
        case .character("c"):
            if let selected {
                attempt { try session.store.makeTaskConflict(id: selected.id) }
                notice = "Made a conflict on \"\(selected.task)\""
            }
        case .character("q"), .control("c"): quitting = true
        default: break
        }
    }

    // MARK: - Actions

    /// Opens the user's database ("processLogin"): a wrong password with encryption asks for the old one.
    private func logIn(username: String, password: String?) {
        do {
            start(try accounts.open(username, password: password), username: username, password: password)
        } catch TodoError.wrongPassword where accounts.exists(username) {
            passwordChange = PasswordChange(username: username, newPassword: password ?? "")
        } catch {
            notice = TodoError.from(error).description
        }
    }

    private func start(_ database: Database, username: String, password: String?) {
        do {
            let send = send
            session = try TodoSession(
                database: database, username: username, password: password, settings: settings
            ) { send.yield($0) }
            screen = .lists
            selection = 0
            loginForm = LoginForm()
        } catch {
            try? database.close()
            notice = TodoError.from(error).description
        }
    }

    private func logOut() {
        loginForm = LoginForm(username: session?.username ?? "")
        session?.close()
        session = nil
        screen = settings.login ? .login : .lists
        if !settings.login { quitting = true }
    }

    private func leaveTasks() {
        session?.closeList()
        screen = .lists
        selection = 0
    }

    /// Runs `action`, showing its error as the notice.
    private func attempt(_ action: () throws -> Void) {
        do { try action() } catch { notice = TodoError.from(error).description }
    }

    // MARK: - Drawing

    private func render() {
        let (rows, columns) = terminal.size
        var body: [String] = []
        var title = " Todo"
        var help: String
        switch screen {
        case .login:
            title += " · Log in"
            body = loginLines()
            help = "Tab: next field · Enter: log in · Esc: quit"
        case .lists:
            title += " · \(session?.username ?? "") · Task lists"
            body = listLines(height: rows - 5)
            help = "↑↓ move · Enter open · n new · r rename · d delete · s share · m moderator · c conflict"
                + (settings.login ? " · l logout" : "") + " · q quit"
        case .tasks:
            let list = session?.currentOpenList
            title += " · \(session?.username ?? "") · \(list?.name ?? "")"
            if let list, list.owner != session?.username { title += " (\(list.owner)'s)" }
            body = taskLines(height: rows - 5)
            help = "↑↓ move · Space complete · n new · e edit · d delete · i image · s share · u unshare · c conflict · Esc back"
        }
        if let passwordChange {
            body = [
                "", "  Password Changed", "",
                "  The password does not open \(passwordChange.username)'s data on this device.",
                "  Type your old password to migrate the data to the new one, or delete the local data",
                "  (changes not synced yet are lost).", "",
                "  Old password: " + String(repeating: "*", count: passwordChange.oldPassword.count) + "_",
            ]
            help = "Enter: Migrate · Ctrl-X: Delete · Esc: cancel"
        }
        if let dialog {
            body = ["", "  " + dialog.title, ""] + dialog.lines.map { "  " + $0 } + ["", "  Press Enter"]
            help = "Enter: OK"
        }
        if let prompt {
            help = "\(prompt.title): " + (prompt.secret ? String(repeating: "*", count: prompt.text.count) : prompt.text) + "_"
        }
        var lines = [inverse(pad(title, columns)), ""]
        lines += body.prefix(max(0, rows - 5)).map { clip($0, columns) }
        while lines.count < rows - 3 { lines.append("") }
        lines.append(clip(notice ?? "", columns))
        lines.append(clip(help, columns))
        lines.append(inverse(pad(" " + (session.map { settings.sync ? $0.syncState.line : "Sync: off" } ?? ""), columns)))
        terminal.draw(lines)
    }

    private func loginLines() -> [String] {
        let marker = { (on: Bool) in on ? "> " : "  " }
        return [
            "  Log in with your gateway user" + (settings.encryption ? " (the password also unlocks your data)" : ""),
            "",
            marker(!loginForm.onPassword) + "Username: " + loginForm.username + (loginForm.onPassword ? "" : "_"),
            marker(loginForm.onPassword) + "Password: " + String(repeating: "*", count: loginForm.password.count)
                + (loginForm.onPassword ? "_" : ""),
        ]
    }

    private func listLines(height: Int) -> [String] {
        guard let session else { return [] }
        let lists = session.taskLists
        selection = min(selection, max(0, lists.count - 1))
        if lists.isEmpty { return ["  No lists yet: press n to make one"] }
        return window(lists.enumerated().map { index, list in
            let owner = list.owner == session.username ? "" : "  (\(list.owner))"
            let name = list.name + owner
            return (index == selection ? "> " : "  ") + pad(name, 48) + " " + String(list.incompleteCount)
        }, height: height)
    }

    private func taskLines(height: Int) -> [String] {
        guard let session else { return [] }
        let tasks = session.tasks
        selection = min(selection, max(0, tasks.count - 1))
        // The users a list is shared with are readable by its owner (and moderators).
        let shared = session.sharedWith
        var lines: [String] = []
        if !shared.isEmpty || session.currentOpenList?.owner == session.username {
            lines = ["  Shared with: " + (shared.isEmpty ? "nobody" : shared.joined(separator: ", ")), ""]
        }
        if tasks.isEmpty { return lines + ["  No tasks yet: press n to add one"] }
        lines += window(tasks.enumerated().map { index, task in
            (index == selection ? "> " : "  ") + (task.complete ? "[x] " : "[ ] ") + task.task
                + (task.hasImage ? "  [image]" : "")
        }, height: height - lines.count)
        return lines
    }

    /// The part of `lines` that keeps the selection on screen.
    private func window(_ lines: [String], height: Int) -> [String] {
        guard height > 0, lines.count > height else { return lines }
        let start = min(max(0, selection - height + 1), lines.count - height)
        return Array(lines[start..<(start + height)])
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }

    private func clip(_ text: String, _ width: Int) -> String {
        text.count > width ? String(text.prefix(width)) : text
    }

    private func inverse(_ text: String) -> String { "\u{1B}[7m" + text + "\u{1B}[0m" }
}
