import CouchetteTestSupport
import Foundation

/// A terminal program run in a private tmux server (its own socket in a folder of its own), driven by keys and
/// read from the screen. Waits are on the pane's output: `pipe-pane` appends it to a file that `tail -F` follows,
/// and each new byte is a cue to look at the screen again. The server goes with the session.
final class TmuxSession {
    private let directory = TemporaryDirectory()
    private let socket: String
    private let name = "couchette"
    private let watcher: ChildProcess

    /// Starts `command` (a shell command line) in a `columns`×`rows` terminal.
    init(_ command: String, columns: Int = 160, rows: Int = 48) throws {
        socket = directory.path + "/tmux.sock"
        let log = directory.path + "/pane.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        watcher = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["tail", "-F", "-c", "+1", log], separateErrors: true)
        _ = try tmux(["new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)", command])
        _ = try tmux(["pipe-pane", "-t", name, "-o", "cat >> '\(log)'"])
    }

    deinit {
        _ = try? tmux(["kill-server"])
        watcher.kill()
    }

    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        try ChildProcess.run(["tmux", "-S", socket] + arguments, within: .seconds(30))
    }

    /// Types keys: text, or tmux key names (`Enter`, `Tab`, `Up`, `C-d`).
    func send(_ keys: String...) throws {
        try tmux(["send-keys", "-t", name] + keys)
    }

    /// What the terminal shows now.
    func screen() throws -> String {
        try tmux(["capture-pane", "-p", "-t", name])
    }

    /// Whether the program still runs (its session ends when it exits).
    var isRunning: Bool {
        (try? tmux(["has-session", "-t", name])) != nil
    }

    /// Waits until the screen satisfies `isReady` and returns it; throws after `limit`.
    @discardableResult
    func waitForScreen(within limit: Duration = .seconds(30), _ what: String, until isReady: (String) -> Bool) throws
        -> String
    {
        let deadline = ContinuousClock.now + limit
        while true {
            let seen = watcher.output.utf8.count
            let shown = try screen()
            if isReady(shown) { return shown }
            let left = deadline - .now
            guard left > .zero else {
                throw TmuxFailure(description: "the screen never showed \(what):\n\(shown)")
            }
            // The next output of the pane (or the deadline).
            _ = try? watcher.waitForOutput(within: left) { $0.utf8.count > seen }
        }
    }
}

struct TmuxFailure: Error, CustomStringConvertible {
    let description: String
}
