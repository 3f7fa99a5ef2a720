import ArgumentParser
import Couchette
import Foundation

// MARK: - ReplicateCommand

/// `couchette push DB URL`, `couchette pull DB URL` (and `--bidi` for both): replicates the collection with a
/// gateway or CouchDB database (`http(s)://` or `ws(s)://` URL) or another local database (a `.couchette` path), with
/// progress on a terminal (a bar: documents, rate, ETA) or plain progress lines otherwise.
struct ReplicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Replicate with a remote database (http(s)://host:4984/db) or another local one; pull: the other way.",
        aliases: ["pull", "sync"])

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The other side: http(s):// or ws(s):// URL of a remote database, or a .couchette path.")
    var target: String

    @Flag(help: "Both directions (the default of `sync`).")
    var bidi = false

    @Flag(help: "Keep replicating until interrupted.")
    var continuous = false

    @Option(help: "Credentials for the remote, NAME or NAME:PASSWORD (the password is asked for when not given).")
    var user: String?

    func run() throws {
        try reportingErrors {
            let invoked = CommandLine.arguments.dropFirst().first { ["push", "pull", "sync"].contains($0) } ?? "push"
            let type: ReplicatorType = bidi || invoked == "sync" ? .pushAndPull : invoked == "pull" ? .pull : .push
            let database = try options.open(writing: type != .push)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            var other: Database?
            let endpoint: any Endpoint
            if let url = URL(string: target), let scheme = url.scheme, ["http", "https", "ws", "wss"].contains(scheme) {
                endpoint = URLEndpoint(url: url)
            } else {
                var otherOptions = options
                otherOptions.database = target
                let opened = try otherOptions.open(writing: type != .pull)
                other = opened
                endpoint = DatabaseEndpoint(database: opened)
            }
            defer { try? other?.close() }
            var config = ReplicatorConfiguration(target: endpoint)
            config.addCollection(collection)
            config.replicatorType = type
            config.continuous = continuous
            if let user {
                let (name, password) = try CredentialsOption.parse(user)
                config.authenticator = BasicAuthenticator(username: name, password: password)
            }
            let replicator = Replicator(config: config)
            let progress = ProgressReporter(isTerminal: isatty(STDERR_FILENO) != 0)
            let continuous = continuous
            let outcome = Blocking.run {
                let watcher = Task {
                    for await change in replicator.changes() {
                        progress.show(change.status.progress.completed, of: change.status.progress.total)
                    }
                }
                defer { watcher.cancel() }
                if continuous {
                    // Until it stops on its own (an error) or Ctrl-C / SIGTERM stops it.
                    let changes = replicator.changes()
                    replicator.start()
                    let interruption = Task {
                        await Interruption.wait()
                        replicator.stop()
                    }
                    defer { interruption.cancel() }
                    for await change in changes where change.status.activity == .stopped { break }
                } else {
                    try await replicator.run()
                }
            }
            progress.finish()
            if case .failure(let error) = outcome { throw error }
            if let error = replicator.status.error { throw error }
            let status = replicator.status.progress
            let refused = replicator.rejectedDocuments.count
            FileHandleOutput.standardOutput(
                "Replicated: \(status.completed) of \(status.total) changes\(refused > 0 ? ", \(refused) refused" : "")\n")
        }
    }
}

// MARK: - Blocking

/// Runs async work to its end from a synchronous command.
enum Blocking {
    static func run(_ work: @escaping @Sendable () async throws -> Void) -> Result<Void, any Error> {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox()
        Task {
            do { try await work() } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return box.result
    }

    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Result<Void, any Error> = .success(())
        var result: Result<Void, any Error> { lock.withLock { stored } }
        func set(_ result: Result<Void, any Error>) { lock.withLock { stored = result } }
    }
}

// MARK: - ProgressReporter

/// Progress on standard error: a bar with counts, rate and ETA redrawn in place on a terminal, or a plain line per
/// tenth of the work otherwise.
final class ProgressReporter: @unchecked Sendable {
    private let isTerminal: Bool
    private let started = Date()
    private let lock = NSLock()
    private var lastDecile = -1
    private var drew = false

    init(isTerminal: Bool) {
        self.isTerminal = isTerminal
    }

    func show(_ completed: UInt64, of total: UInt64) {
        lock.withLock {
            guard total > 0 else { return }
            let fraction = min(1, Double(completed) / Double(total))
            let elapsed = Date().timeIntervalSince(started)
            let rate = elapsed > 0 ? Double(completed) / elapsed : 0
            let remaining = rate > 0 ? Double(total - min(completed, total)) / rate : 0
            if isTerminal {
                let width = 30
                let filled = Int(fraction * Double(width))
                let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                FileHandleOutput.standardError(
                    "\r\(bar) \(completed)/\(total) changes  \(Int(rate))/s  ETA \(Int(remaining.rounded()))s ")
                drew = true
            } else {
                let decile = Int(fraction * 10)
                guard decile > lastDecile else { return }
                lastDecile = decile
                FileHandleOutput.standardError("progress: \(completed)/\(total) changes (\(decile * 10)%)\n")
            }
        }
    }

    func finish() {
        lock.withLock { if drew { FileHandleOutput.standardError("\n") } }
    }
}
