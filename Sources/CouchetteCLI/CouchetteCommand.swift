import ArgumentParser
@_spi(CrashTesting) import Couchette
import CouchetteCore
import Foundation

/// `couchette`: the command-line tool for Couchette databases, with cblite's verbs and flags.
///
/// ```text
/// couchette info todo.couchette              (or: couchette todo.couchette info)
/// couchette ls -l --limit 10 todo.couchette
/// couchette cat todo.couchette doc1 doc2
/// couchette put -w todo.couchette doc1 '{"name": "Groceries"}'
/// couchette query todo.couchette "SELECT META().id, name FROM _ WHERE type = 'task-list'"
/// ```
///
/// Commands that change the database need `--writeable` (`-w`). Exit codes: 0 ok, 1 error, 2 usage, 3 not found,
/// 4 wrong key.
@main
struct CouchetteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "couchette",
        abstract: "Inspect and work with Couchette databases.",
        discussion: """
            The database may come first, as in cblite: `couchette todo.couchette ls` is `couchette ls todo.couchette`.
            Commands that change the database need --writeable (-w). Exit codes: 0 ok, 1 error, 2 usage, 3 not \
            found, 4 wrong key.
            """,
        version: Database.version,
        subcommands: [
            InfoCommand.self, ListCommand.self, ListCollectionsCommand.self, MakeCollectionCommand.self,
            CatCommand.self, RevsCommand.self, PutCommand.self, EditCommand.self, RemoveCommand.self, PurgeCommand.self,
            QueryCommand.self, MakeIndexCommand.self, RemoveIndexCommand.self, ListIndexesCommand.self,
            ReindexCommand.self, ExportCommand.self, ImportCommand.self, CompactCommand.self, CheckCommand.self, LogcatCommand.self,
            EncryptCommand.self, DecryptCommand.self, CopyCommand.self, ReplicateCommand.self, ServeCommand.self, ShellCommand.self, CanonicalJSON.self, NextRevision.self, StressSave.self,
            StressRekey.self,
            StressMigrate.self,
        ]
    )

    /// Parses the arguments, first moving a leading database path after the command (cblite's order).
    static func main() {
        let given = Array(CommandLine.arguments.dropFirst())
        // A first word that is neither a command nor a database here (with or without `.couchette`).
        if let first = given.first, !commandNames.contains(first),
            let message = UnknownCommand.message(for: first, commands: visibleCommandNames)
        {
            FileHandleOutput.standardError(message)
            Foundation.exit(2)
        }
        main(ArgumentOrder.normalized(given, commands: commandNames))
    }

    /// The commands `--help` lists, aliases included (not the hidden crash-test ones).
    static var visibleCommandNames: [String] {
        configuration.subcommands.filter { $0.configuration.shouldDisplay }.flatMap { command in
            [command.configuration.commandName ?? ""] + command.configuration.aliases
        }
    }

    /// The names of the commands, aliases included.
    static var commandNames: Set<String> {
        var names = Set<String>()
        for command in configuration.subcommands {
            let configuration = command.configuration
            names.insert(configuration.commandName ?? "")
            names.formUnion(configuration.aliases)
        }
        return names.union(["help", "--help", "-h", "--version"])
    }
}

// MARK: - ArgumentOrder

/// cblite's argument order, `DB COMMAND ARGS`, rewritten to the parser's `COMMAND DB ARGS`.
enum ArgumentOrder {
    static func normalized(_ arguments: [String], commands: Set<String>) -> [String] {
        guard let first = arguments.first, !commands.contains(first) else { return arguments }
        // `couchette [-w] DB [options]`: the interactive shell.
        if isDatabaseAndOptions(arguments) { return ["shell"] + arguments }
        guard !first.hasPrefix("-"), arguments.count >= 2, commands.contains(arguments[1]) else { return arguments }
        return [arguments[1], arguments[0]] + arguments.dropFirst(2)
    }

    /// The database options that take a value.
    private static let valueOptions: Set<String> = ["--password-file", "--key-hex", "--collection"]

    /// Whether `arguments` are one database path and options (`-w DB --password-file FILE`), no command.
    private static func isDatabaseAndOptions(_ arguments: [String]) -> Bool {
        var expectsValue = false
        var positionals = 0
        for argument in arguments {
            if expectsValue {
                expectsValue = false
            } else if argument.hasPrefix("-") {
                expectsValue = valueOptions.contains(argument)
            } else {
                positionals += 1
            }
        }
        return positionals == 1
    }
}

/// Prints the canonical form of a JSON document (sorted keys, no whitespace), the form revision IDs digest.
struct CanonicalJSON: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "canonical-json",
        abstract: "Print the canonical form of a JSON document read from a file or standard input.")

    @Argument(help: "A JSON file; standard input when omitted.")
    var file: String?

    @Flag(help: "Indent the output.")
    var pretty = false

    func run() throws {
        let value = try JSONValue(parsing: try readInput(file))
        print(value.serializedString(prettyPrinted: pretty))
    }
}

/// Prints the revision ID a local edit would create.
struct NextRevision: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next-rev",
        abstract: "Print the revision ID that saving a JSON body (file or standard input) on top of a parent creates.")

    @Option(help: "The parent revision ID; none for a new document.")
    var parent: String?

    @Flag(help: "The edit is a deletion.")
    var deleted = false

    @Argument(help: "A JSON file holding the body; standard input when omitted.")
    var file: String?

    func run() throws {
        let body = try JSONValue(parsing: try readInput(file))
        let parentID = try parent.map { text throws(CoreError) in try RevisionID(parsing: text) }
        print(try RevisionID.next(after: parentID, body: body, deleted: deleted))
    }
}

private func readInput(_ path: String?) throws -> Data {
    if let path {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("Cannot read \(path)")
        }
        return data
    }
    return FileHandle.standardInput.readDataToEndOfFile()
}

/// Saves documents in a loop, printing each ID once its save has returned; used by the crash test, which
/// kills this process and then checks that every printed save survived.
struct StressSave: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-save", abstract: "Save documents in a loop (for crash testing).", shouldDisplay: false)

    @Option(help: "The folder holding the database.")
    var directory: String

    @Option(help: "The database name.")
    var name = "crash"

    @Option(help: "Stop after this many saves.")
    var limit = 1_000_000

    @Option(help: "Encrypt the database with this password.")
    var password: String?

    @Option(help: "Saves per transaction (inBatch); the IDs are printed once it returns.")
    var batch = 1

    func run() throws {
        var config = DatabaseConfiguration()
        config.directory = directory
        config.encryptionKey = password.map(EncryptionKey.password)
        let db = try Database(name: name, config: config)
        let collection = try db.defaultCollection()
        for first in stride(from: 0, to: limit, by: max(batch, 1)) {
            let indexes = first..<min(first + max(batch, 1), limit)
            try db.inBatch {
                for index in indexes { try save(index, in: collection) }
            }
            FileHandle.standardOutput.write(Data(indexes.map { "saved doc-\($0)\n" }.joined().utf8))
        }
        try db.close()
    }

    private func save(_ index: Int, in collection: Collection) throws {
        try collection.save(
            document: MutableDocument(id: "doc-\(index)", data: ["index": index, "payload": String(repeating: "x", count: 200)]))
        if index % 7 == 0 {
            // Some updates too, so the crash can land in the middle of either.
            if let document = try collection.document(id: "doc-\(index / 2)")?.toMutable() {
                try collection.save(document: document.setInt(index, forKey: "updatedAt"))
            }
        }
    }
}

struct StressRekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-rekey",
        abstract: "Change a database's key back and forth between two passwords (for crash testing).",
        shouldDisplay: false)

    @Option(help: "The folder holding the database.")
    var directory: String

    @Option(help: "The database name.")
    var name = "crash"

    @Option(help: "The password the database has now.")
    var from: String

    @Option(help: "The other password.")
    var to: String

    @Option(help: "End the process (exit status 0) when the first key change reaches this step.")
    var exitAt: String?

    func run() throws {
        if let exitAt {
            Database.observeKeyChangeSteps { step in
                if step == exitAt { _exit(0) }
            }
        }
        var config = DatabaseConfiguration()
        config.directory = directory
        config.encryptionKey = .password(from)
        let db = try Database(name: name, config: config)
        var keys = (current: from, next: to)
        while true {
            try db.changeEncryptionKey(.password(keys.next))
            keys = (keys.next, keys.current)
            FileHandle.standardOutput.write(Data("rekeyed \(keys.current)\n".utf8))
        }
    }
}

struct StressMigrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-migrate",
        abstract: "Open a database of an older format, upgrading it, and end the process at a step of the migration (for crash testing).",
        shouldDisplay: false)

    @Option(help: "The folder holding the database.")
    var directory: String

    @Option(help: "The database name.")
    var name = "crash"

    @Option(help: "End the process (exit status 0, nothing committed or closed) when the migration reaches this step.")
    var exitAt: String

    func run() throws {
        let exitAt = exitAt
        Database.observeMigrationSteps { step in
            if step == exitAt { _exit(0) }
        }
        var config = DatabaseConfiguration()
        config.directory = directory
        _ = try Database(name: name, config: config)
        FileHandle.standardOutput.write(Data("migrated without reaching \(exitAt)\n".utf8))
    }
}
