import AsyncHTTPClient
import CouchetteCore
import CouchetteTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The tutorial's app (`todo`, examples/todo/app) as a user runs it: full-screen instances in tmux against a
/// gateway process with the Todo config (its databases in files, so that it can stop and come back), the bot
/// beside them; and the line mode on its own for the pre-built database, the views and the conflict lessons.
@Suite(.timeLimit(.minutes(5))) struct TodoAppTests {
    /// A gateway process on the Todo config (examples/todo/sync-gateway-config.json) with free ports and its
    /// database in `walrus:` files; ``restart()`` brings it back on the same ports and files.
    final class TodoGateway {
        let publicPort: Int
        let adminPort: Int
        private let config: String
        private var process: ChildProcess

        init(in directory: TemporaryDirectory) throws {
            publicPort = try freeLoopbackPort()
            adminPort = try freeLoopbackPort()
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("examples/todo/sync-gateway-config.json")
            let text = try String(contentsOf: source, encoding: .utf8)
                .replacingOccurrences(
                    of: #""log": ["HTTP", "Auth"],"#,
                    with: #""interface": "127.0.0.2:\#(publicPort)", "adminInterface": "127.0.0.2:\#(adminPort)", "log": ["HTTP", "Auth"],"#)
                .replacingOccurrences(of: #""server": "walrus:""#, with: #""server": "walrus:\#(directory.path)/walrus""#)
            config = directory.path + "/todo-config.json"
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            process = try Self.start(config)
        }

        private static func start(_ config: String) throws -> ChildProcess {
            let process = try ChildProcess(try ChildProcess.builtProduct("couchette-gateway"), [config])
            _ = try process.waitForOutput(within: .seconds(60)) { $0.contains("Admin interface listening") }
            return process
        }

        /// On 127.0.0.2: while it is stopped, the apps' replicators retry its ports, which another test's server on
        /// 127.0.0.1 may have taken meanwhile.
        var url: String { "http://127.0.0.2:\(publicPort)/todo/" }

        func stop() { process.terminate() }

        func restart() throws { process = try Self.start(config) }

        /// A document on the admin port, nil when missing.
        func document(_ id: String) throws -> JSONValue? {
            let (status, body) = try call(.GET, "/todo/\(id)?conflicts=true")
            return status == 200 ? try JSONValue(parsing: body) : nil
        }

        /// The documents of the database (admin port), their bodies included.
        func documents() throws -> [JSONValue] {
            let rows = try JSONValue(parsing: try call(.GET, "/todo/_all_docs?include_docs=true").1)["rows"]?.arrayValue
            return (rows ?? []).compactMap { $0["doc"] }
        }

        func call(_ method: HTTPMethod, _ path: String, _ body: String? = nil) throws -> (Int, [UInt8]) {
            var request = HTTPClientRequest(url: "http://127.0.0.2:\(adminPort)\(path)")
            request.method = method
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let reply = Reply()
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
                    reply.result = .success((Int(response.status.code), Array(buffer: try await response.body.collect(upTo: 1 << 22))))
                } catch {
                    reply.result = .failure(error)
                }
                done.signal()
            }
            done.wait()
            return try reply.result!.get()
        }

        private final class Reply: @unchecked Sendable {
            var result: Result<(Int, [UInt8]), any Error>?
        }

        deinit { process.terminate() }
    }

    /// `todo` full screen in a terminal of its own, with the tutorial's switches for the whole tutorial.
    private static func app(_ directory: String, gateway: TodoGateway, encryption: Bool = true) throws -> TmuxSession {
        let todo = try ChildProcess.builtProduct("todo").path
        let flags = "--login --sync --conflict-resolution" + (encryption ? " --encryption" : "")
        return try TmuxSession(
            "'\(todo)' \(flags) --gateway '\(gateway.url)' --directory '\(directory)'; echo \"exited with $?\"; exec sleep 600",
            columns: 120, rows: 24)
    }

    private static func logIn(_ app: TmuxSession, _ user: String, _ password: String) throws {
        try app.waitForScreen("the login screen") { $0.contains("Username:") }
        try app.send(user, "Tab", password, "Enter")
    }

    @Test("The tutorial end to end: lists and tasks sync, the bot's image arrives, sharing, a moderator, offline edits converge with their conflict merged, a password change migrates the key")
    func tutorialEndToEnd() async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            defer { withExtendedLifetime(directory) {} }
            let gateway = try TodoGateway(in: directory)

            // user1 logs in (a new encrypted database named after the user) and makes a list with two tasks.
            let phone = try Self.app(directory.path + "/phone", gateway: gateway)
            try Self.logIn(phone, "user1", "pass")
            try phone.waitForScreen("the empty lists screen") { $0.contains("user1 · Task lists") && $0.contains("No lists yet") }
            try phone.send("n", "Shopping", "Enter")
            try phone.waitForScreen("the new list") { $0.contains("> Shopping") }
            try phone.send("Enter")
            try phone.waitForScreen("the list's tasks screen") { $0.contains("No tasks yet") }
            try phone.send("n", "Coffee", "Enter")
            try phone.waitForScreen("the first task") { $0.contains("[ ] Coffee") }
            try phone.send("n", "Milk", "Enter")
            try phone.waitForScreen("both tasks, pushed") { $0.contains("[ ] Milk") && $0.contains("Sync: idle") }
            #expect(try phone.screen().contains("Shared with: nobody"))

            // They are on the gateway.
            let documents = try gateway.documents()
            let list = try #require(documents.first { $0["type"] == "task-list" })
            #expect(list["name"] == "Shopping" && list["owner"] == "user1")
            let listID = try #require(list["_id"]?.stringValue)
            #expect(listID.hasPrefix("user1."))
            let tasks = documents.filter { $0["type"] == "task" }
            #expect(Set(tasks.compactMap { $0["task"]?.stringValue }) == ["Coffee", "Milk"])
            #expect(tasks.allSatisfy { $0["taskList"]?["id"]?.stringValue == listID && $0["complete"] == false })
            #expect(tasks.allSatisfy { $0["createdAt"]?.stringValue?.hasSuffix("Z") == true })

            // The bot attaches the coffee image on the gateway; the indicator appears through replication.
            let bot = try ChildProcess(
                try ChildProcess.builtProduct("todo-bot"), ["--url", "http://127.0.0.2:\(gateway.adminPort)", "--db", "todo"])
            defer { bot.kill() }
            try phone.waitForScreen("the bot's image") { $0.contains("[ ] Coffee  [image]") }

            // user2 sees nothing until the list is shared; a moderator sees every list.
            let tablet = try Self.app(directory.path + "/tablet", gateway: gateway)
            try Self.logIn(tablet, "user2", "pass")
            try tablet.waitForScreen("user2's empty lists") { $0.contains("user2 · Task lists") && $0.contains("No lists yet") }
            let moderator = try Self.app(directory.path + "/moderator", gateway: gateway, encryption: false)
            try Self.logIn(moderator, "mod", "pass")
            try moderator.waitForScreen("user1's list for the moderator") { $0.contains("Shopping  (user1)") }
            try phone.send("s", "user2", "Enter")
            try phone.waitForScreen("the list shared") { $0.contains("Shared with: user2") }
            try tablet.waitForScreen("the shared list with its incomplete count") {
                $0.range(of: #"Shopping  \(user1\) +2"#, options: .regularExpression) != nil
            }
            #expect(try tablet.screen().contains("No lists yet") == false)

            // The gateway stops. user2 quits and logs in again offline (the password opens the local database),
            // then renames Milk while user1 completes it: two branches of one task.
            gateway.stop()
            try tablet.send("q")
            try tablet.waitForScreen("the app quitting") { $0.contains("exited with 0") }
            let offline = try Self.app(directory.path + "/tablet", gateway: gateway)
            try Self.logIn(offline, "user2", "pass")
            try offline.waitForScreen("the list, offline") { $0.contains("Shopping  (user1)") }
            try offline.send("Enter")
            try offline.waitForScreen("the tasks, offline") { $0.contains("[ ] Milk") }
            try offline.send("Down", "e", "BSpace", "BSpace", "BSpace", "BSpace", "Oat milk", "Enter")
            try offline.waitForScreen("the renamed task") { $0.contains("[ ] Oat milk") }
            try phone.send("Down", "Space")
            try phone.waitForScreen("the completed task") { $0.contains("[x] Milk") }

            // Back online, both converge on the n-way merge: renamed and completed, no conflict left.
            try gateway.restart()
            for app in [phone, offline] {
                try app.waitForScreen(within: .seconds(60), "the merged task") { $0.contains("[x] Oat milk") && $0.contains("Sync: idle") }
            }
            let milk = try #require(try gateway.documents().first { $0["task"] == "Oat milk" })
            let merged = try #require(try gateway.document(milk["_id"]!.stringValue!))
            #expect(merged["complete"] == true && merged["_conflicts"] == nil)
            try moderator.send("Enter")
            try moderator.waitForScreen("the moderator seeing the merge") { $0.contains("[x] Oat milk") }

            // An admin elects user2 a moderator (a `moderator` document): user2 then sees a list nobody shared.
            try phone.send("Escape", "n", "Private", "Enter")
            try phone.waitForScreen("the private list") { $0.contains("Private") && $0.contains("Sync: idle") }
            let admin = try Self.app(directory.path + "/admin", gateway: gateway, encryption: false)
            try Self.logIn(admin, "admin", "pass")
            try admin.waitForScreen("the admin's lists screen") { $0.contains("admin · Task lists") }
            try admin.send("m", "user2", "Enter")
            try offline.send("Escape")
            try offline.waitForScreen("the private list for the new moderator") { $0.contains("Private  (user1)") }
            #expect(try gateway.document("moderator.user2")?["username"] == "user2")

            // Seed 000: the password changes on the gateway; the next push gets 401, the app logs out, the new
            // password does not open the database, the old one migrates its key, and the list made meanwhile syncs.
            #expect(try gateway.call(.PUT, "/todo/_user/user1", #"{"name": "user1", "password": "newpass"}"#).0 == 200)
            try phone.send("n", "After the change", "Enter")
            try phone.waitForScreen("the authentication error") { $0.contains("Your username or password is not correct.") }
            try phone.send("Enter")
            try phone.waitForScreen("the login screen again") { $0.contains("Username: user1") }
            try phone.send("Tab", "newpass", "Enter")
            try phone.waitForScreen("the password-changed dialog") { $0.contains("Password Changed") && $0.contains("Old password:") }
            try phone.send("pass", "Enter")
            try phone.waitForScreen("the lists after the migration") {
                $0.contains("After the change") && $0.contains("Shopping") && $0.contains("Sync: idle")
            }
            #expect(try gateway.documents().contains { $0["name"] == "After the change" && $0["owner"] == "user1" })
            // The new password now opens the data: the next login goes straight in.
            try phone.send("l")
            try phone.waitForScreen("the login screen once more") { $0.contains("Username: user1") }
            try phone.send("Tab", "newpass", "Enter")
            try phone.waitForScreen("the lists with the new password") { $0.contains("After the change") }

            // Another change, and this time "Delete": the local data goes with the list made meanwhile, and a new
            // database pulls the rest back from the gateway.
            #expect(try gateway.call(.PUT, "/todo/_user/user1", #"{"name": "user1", "password": "third"}"#).0 == 200)
            try phone.send("n", "Never synced", "Enter")
            try phone.waitForScreen("the second authentication error") { $0.contains("Your username or password is not correct.") }
            try phone.send("Enter")
            try phone.waitForScreen("the login screen after the second change") { $0.contains("Username: user1") }
            try phone.send("Tab", "third", "Enter")
            try phone.waitForScreen("the dialog again") { $0.contains("Password Changed") }
            try phone.send("C-x")
            try phone.waitForScreen("the lists pulled into a new database") {
                $0.contains("After the change") && $0.contains("Shopping") && $0.contains("Private") && $0.contains("Sync: idle")
            }
            #expect(try phone.screen().contains("Never synced") == false)
        }
    }

    @Test("Line mode: the pre-built Groceries database, incomplete counts, an attached image, the tutorial's list and task conflicts resolved")
    func lineModeLessons() async throws {
        try await offCooperativeThreads {
            let directory = TemporaryDirectory()
            defer { withExtendedLifetime(directory) {} }
            let image = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("examples/todo/bot/Resources/coffee.png").path
            let script = """
                lists
                tasks 1
                rename-list 1 Shopping
                add-task 1 Coffee
                image 1 6 \(image)
                tasks 1
                lists
                conflict-task 1 2
                wait-resolved
                tasks 1
                conflict-list 1
                wait-resolved
                lists
                delete-task 1 1
                lists
                delete-list 1
                lists
                quit
                """
            try script.write(toFile: directory.path + "/script", atomically: true, encoding: .utf8)
            let todo = try ChildProcess.builtProduct("todo").path
            let app = try ChildProcess(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", "'\(todo)' --lines --prebuilt --conflict-resolution --directory '\(directory.path)' < '\(directory.path)/script'"])
            #expect(try app.waitForExit(within: .seconds(120)) == 0)
            let output = app.output.components(separatedBy: "\n")
            // The pre-built database: the Groceries list with its tasks, 4 of 5 incomplete (groupLevel 1 count).
            #expect(output.prefix(8) == [
                "ready", "1. Groceries · 4", "1. [ ] Apples", "2. [ ] Bread", "3. [ ] Cheese", "4. [x] Milk", "5. [ ] Potatoes",
                "ok",
            ])
            #expect(output.contains("6. [ ] Coffee [image]"))
            #expect(output.contains("1. Shopping · 5"))
            // The task conflict merged: one branch renamed it, the other completed it.
            #expect(output.contains("2. [x] Bread (edited)"))
            // The list conflict resolved by keeping the winner and deleting the other branch: one list (the next
            // line answers delete-task), and deleting the list reveals no other revision.
            let resolved = try #require(output.lastIndex { $0 == "1. Text Changed · 4" || $0 == "1. Shopping (other device) · 4" })
            #expect(output[resolved + 1] == "ok")
            // Deleting the incomplete Apples task lowers the count.
            #expect(output[resolved + 2] == output[resolved].replacingOccurrences(of: "· 4", with: "· 3"))
            #expect(output.filter { $0.hasPrefix("resolved ") }.count >= 2)
            #expect(output.suffix(2).first == "no lists")
        }
    }
}
