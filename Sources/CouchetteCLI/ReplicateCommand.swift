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

    @Flag(
        name: [.customShort("x"), .long],
        help: "The database written (pull, sync: this one; push: a local target) must exist (by default it is created).")
    var existing = false

    func run() throws {
        try reportingErrors {
            let invoked = CommandLine.arguments.dropFirst().first { ["push", "pull", "sync"].contains($0) } ?? "push"
            let type: ReplicatorType = bidi || invoked == "sync" ? .pushAndPull : invoked == "pull" ? .pull : .push
            // Pulling writes this database: created when missing, as cblite does.
            let database = type == .push ? try options.open() : try options.openOrCreate(mustExist: existing)
            defer { try? database.close() }
            var run = ReplicationRun(other: target, type: type, continuous: continuous, user: user)
            run.otherMustExist = existing
            try run.run(collection: try options.collection(in: database), options: options)
        }
    }
}

// MARK: - ReplicationRun

/// One replication of the command line (push, pull, sync, cp to or from a URL or another file), with progress,
/// until caught up or, continuous, until Ctrl-C / SIGTERM; prints `Replicated: N of M changes`.
struct ReplicationRun {
    /// A remote database URL, or a local database path.
    var other: String
    var type: ReplicatorType
    var continuous = false
    /// `NAME[:PASSWORD]` for the remote.
    var user: String?
    /// Whether the other local database must exist (`-x`); by default one that is written is created.
    var otherMustExist = false

    /// Whether `text` names a remote database.
    static func isRemote(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme else { return false }
        return ["http", "https", "ws", "wss"].contains(scheme.lowercased())
    }

    func run(collection: Collection, options: DatabaseOptions) throws {
        var opened: Database?
        let endpoint: any Endpoint
        if Self.isRemote(other), let url = URL(string: other) {
            endpoint = URLEndpoint(url: url)
        } else {
            var otherOptions = options
            otherOptions.database = other
            opened = type == .pull ? try otherOptions.open() : try otherOptions.openOrCreate(mustExist: otherMustExist)
            endpoint = DatabaseEndpoint(database: opened!)
        }
        defer { try? opened?.close() }
        var config = ReplicatorConfiguration(target: endpoint)
        config.addCollection(collection)
        config.replicatorType = type
        config.continuous = continuous
        if let user {
            let (name, password) = try CredentialsOption.parse(user)
            config.authenticator = BasicAuthenticator(username: name, password: password)
        }
        let replicator = Replicator(config: config)
        let progress = ProgressReporter()
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
