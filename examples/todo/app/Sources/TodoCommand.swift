import ArgumentParser
import Couchette
import Foundation

/// The tutorial's switches (seed 002's `kLoginFlowEnabled`, `kSyncEnabled`…) as options.
struct TodoSettings: Sendable {
    var login = false
    var sync = false
    var encryption = false
    var prebuilt = false
    var conflictResolution = false
    var gateway = URL(string: "http://localhost:4984/todo/")!
    var directory = ""
}

/// `todo`: the Todo tutorial's app in a terminal.
@main
struct TodoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo",
        abstract: "The Couchbase Mobile Todo tutorial's app, in a terminal, on Couchette.",
        discussion: """
            Each lesson's "set this constant to true" is an option: --login (kLoginFlowEnabled), --sync \
            (kSyncEnabled), --encryption (kEncryptionEnabled), --prebuilt (kUsePrebuiltDb), --conflict-resolution \
            (kConflictResolution). Without --login the user is "todo". Full-screen keys are listed on each screen; \
            --lines reads commands from standard input instead (type "help").
            """)

    @Flag(help: "Log in (one database per user, named after the user; the password authenticates sync).")
    var login = false
    @Flag(help: "Continuous push and pull with the gateway.")
    var sync = false
    @Flag(help: "Encrypt each user's database with the login password (offline login; needs --login).")
    var encryption = false
    @Flag(help: "Install the pre-built Groceries database on a user's first launch.")
    var prebuilt = false
    @Flag(help: "Resolve conflicts as they appear (keep the winner for lists, merge tasks).")
    var conflictResolution = false
    @Option(help: "The gateway's database URL (public port).")
    var gateway = "http://localhost:4984/todo/"
    @Option(help: "Where the users' databases live.")
    var directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".couchette-todo").path
    @Flag(help: "Read commands line by line from standard input (for scripts) instead of the full-screen app.")
    var lines = false

    func validate() throws {
        guard URL(string: gateway)?.scheme?.hasPrefix("http") == true else {
            throw ValidationError("--gateway must be an http(s) URL")
        }
        if encryption && !login { throw ValidationError("--encryption needs --login: the password is the key") }
    }

    func run() async throws {
        var settings = TodoSettings()
        settings.login = login
        settings.sync = sync
        settings.encryption = encryption
        settings.prebuilt = prebuilt
        settings.conflictResolution = conflictResolution
        settings.gateway = URL(string: gateway)!
        settings.directory = directory
        if lines {
            try await LineModeApp(settings: settings).run()
        } else {
            try await FullScreenApp(settings: settings).run()
        }
    }
}

extension TodoSettings {
    var accounts: TodoAccounts {
        TodoAccounts(directory: directory, encryption: encryption, prebuilt: prebuilt ? TodoAccounts.bundledPrebuilt : nil)
    }
}
