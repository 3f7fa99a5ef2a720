import ArgumentParser
import CEditLine
import Couchette
import Foundation
import Synchronization

// MARK: - ShellCommand

/// `couchette DB.couchette` (or `couchette shell DB.couchette`): an interactive shell on one database, as cblite's.
/// Each line is a command without the database (`ls -l`, `cat doc1`, `query "SELECT …"`); `cd SCOPE.NAME` changes
/// the current collection, `help` lists the commands, `quit` or Ctrl-D leaves. Tab completes command names,
/// collections after `cd` and document IDs after the commands that take one; ↑/↓ go through the history, kept in
/// `~/.couchette_history` (or `$COUCHETTE_HISTORY`).
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "An interactive shell on the database (also: couchette DB.couchette).")

    @OptionGroup var options: DatabaseOptions

    /// Commands that take no database, or make no sense inside the shell.
    static let excluded: Set<String> = ["shell", "canonical-json", "next-rev", "stress-save", "stress-rekey"]
    /// Commands whose first argument is a document ID.
    static let takingDocumentIDs: Set<String> = ["cat", "get", "revs", "put", "rm", "purge", "edit"]

    func run() throws {
        try reportingErrors {
            // The key is asked for once: every command of the session opens the database with it.
            var options = options
            if let key = try options.encryptionKey() {
                DatabaseOptions.sessionKey.withLock { $0 = key }
            }
            let database = try options.open()
            try database.close()
            options.json = false
            Shell(options: options).run()
        }
    }
}

// MARK: - Shell

/// The read–run loop of ``ShellCommand``.
final class Shell {
    private var options: DatabaseOptions
    private let history: String

    init(options: DatabaseOptions) {
        self.options = options
        let environment = ProcessInfo.processInfo.environment
        history = environment["COUCHETTE_HISTORY"] ?? ((environment["HOME"] ?? NSTemporaryDirectory()) + "/.couchette_history")
    }

    private var commandNames: [String] {
        CouchetteCommand.configuration.subcommands.compactMap { $0.configuration.commandName }
            .filter { !ShellCommand.excluded.contains($0) } + ["cd", "help", "quit", "exit"]
    }

    private var prompt: String {
        let name = options.location.name
        return options.collection.map { "\(name)/\($0)> " } ?? "\(name)> "
    }

    func run() {
        couchette_set_readline_name(strdup("couchette"))
        _ = read_history(history)
        let options = self.options
        ShellCompletion.install { [commandNames] previous, prefix in
            guard let command = previous.first else { return commandNames }
            guard previous.count == 1 else { return [] }
            if command == "cd" { return Self.collectionNames(options) }
            if ShellCommand.takingDocumentIDs.contains(command) {
                return Self.documentIDs(options, collection: Shell.currentCollection.withLock { $0 }, prefix: prefix)
            }
            return []
        }
        FileHandleOutput.standardOutput("Couchette \(Database.version) shell on \(options.database). Type help, or quit.\n")
        while let pointer = readline(prompt) {
            let line = String(cString: pointer).trimmingCharacters(in: .whitespaces)
            free(pointer)
            guard !line.isEmpty else { continue }
            add_history(line)
            let words: [String]
            do {
                words = try ShellWords.split(line)
            } catch {
                FileHandleOutput.standardError("couchette: \(CLIError.from(error).description)\n")
                continue
            }
            if words[0] == "quit" || words[0] == "exit" { break }
            perform(words)
            couchette_flush_stdout()
        }
        _ = write_history(history)
        FileHandleOutput.standardOutput("\n")
    }

    /// The collection `cd` chose, for completion (which runs without access to the shell).
    static let currentCollection = Mutex<String?>(nil)

    private func perform(_ words: [String]) {
        switch words[0] {
        case "help":
            for command in CouchetteCommand.configuration.subcommands {
                guard let name = command.configuration.commandName, !ShellCommand.excluded.contains(name),
                    command.configuration.shouldDisplay
                else { continue }
                FileHandleOutput.standardOutput("  \(name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(command.configuration.abstract)\n")
            }
            FileHandleOutput.standardOutput("  cd         Change the current collection (cd SCOPE.NAME; cd alone: the default one).\n")
            FileHandleOutput.standardOutput("  quit       Leave the shell (or Ctrl-D).\n")
            FileHandleOutput.standardOutput("Type COMMAND --help for a command's options.\n")
        case "cd":
            changeCollection(to: words.count > 1 ? words[1] : nil)
        default:
            guard commandNames.contains(words[0]) else {
                FileHandleOutput.standardError("couchette: unknown command \"\(words[0])\"; type help\n")
                return
            }
            var arguments = [words[0], options.database]
            if options.writeable { arguments.append("-w") }
            if let collection = options.collection { arguments += ["--collection", collection] }
            do {
                var command = try CouchetteCommand.parseAsRoot(arguments + words.dropFirst())
                try command.run()
            } catch let exit as ExitCode {
                _ = exit  // the command printed its message
            } catch {
                let message = CouchetteCommand.fullMessage(for: error)
                FileHandleOutput.standardError(message.hasSuffix("\n") ? message : message + "\n")
            }
        }
    }

    private func changeCollection(to name: String?) {
        guard let name, name != "\(Database.defaultScopeName).\(Database.defaultCollectionName)" else {
            options.collection = nil
            Self.currentCollection.withLock { $0 = nil }
            return
        }
        var probe = options
        probe.collection = name
        do {
            let database = try probe.open()
            defer { try? database.close() }
            _ = try probe.collection(in: database)
            options.collection = name
            Self.currentCollection.withLock { $0 = name }
        } catch {
            FileHandleOutput.standardError("couchette: \(CLIError.from(error).description)\n")
        }
    }

    /// `SCOPE.NAME` of every collection.
    private static func collectionNames(_ options: DatabaseOptions) -> [String] {
        guard let database = try? options.open() else { return [] }
        defer { try? database.close() }
        return ((try? database.scopes()) ?? []).flatMap { scope in
            ((try? database.collections(scope: scope.name)) ?? []).map(\.fullName)
        }
    }

    /// Up to 200 document IDs starting with `prefix`.
    private static func documentIDs(_ options: DatabaseOptions, collection: String?, prefix: String) -> [String] {
        var options = options
        options.collection = collection
        guard let database = try? options.open() else { return [] }
        defer { try? database.close() }
        guard let found = try? options.collection(in: database) else { return [] }
        var query = found.createAllDocumentsQuery()
        query.startKey = prefix
        query.endKey = prefix + "\u{10FFFF}"
        query.limit = 200
        return ((try? query.run().allRows) ?? []).compactMap(\.sourceDocumentID)
    }
}
