import ArgumentParser
import Couchette
import Foundation

// MARK: - CompactCommand

/// `couchette compact -w DB [--prune N]`: prunes revision trees (to `N` generations with `--prune`, else the
/// database's default of 20), drops old bodies and unused blobs.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact", abstract: "Compact the database: prune revision trees, drop old bodies and unused blobs.")

    @OptionGroup var options: DatabaseOptions

    @Option(help: "Keep at most N generations of each revision tree (default 20).")
    var prune: UInt32?

    func run() throws {
        try reportingErrors {
            if let prune, prune < 1 { throw CLIError.usage("--prune takes at least 1.") }
            let database = try options.open(writing: true) { config in
                if let prune { config.maxRevTreeDepth = prune }
            }
            defer { try? database.close() }
            let before = InfoCommand.size(of: database.path ?? options.database)
            try database.performMaintenance(type: .compact)
            let after = InfoCommand.size(of: database.path ?? options.database)
            FileHandleOutput.standardOutput(
                "Compacted: the database's files (SQLite file, its write-ahead log, blobs) \(before) → \(after) bytes\n")
        }
    }
}

// MARK: - CheckCommand

/// `couchette check DB`: the database's integrity (every page read, encrypted ones decrypted and checked).
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Check the database's integrity (every page, decrypted when encrypted).")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            try database.performMaintenance(type: .integrityCheck)
            FileHandleOutput.standardOutput("ok\n")
        }
    }
}

// MARK: - Key commands

/// Reads the new key of `encrypt`/`rekey`: a hex key, a password from a file, or one asked for twice.
private func newKey(passwordFile: String?, keyHex: String?) throws -> EncryptionKey {
    try DatabaseOptions.key(hex: keyHex, passwordFile: passwordFile, flag: "--new-key-hex") {
        guard let password = PasswordPrompt.read("New password: "), !password.isEmpty else {
            throw CLIError.usage("No new password given.")
        }
        if isatty(STDIN_FILENO) != 0, PasswordPrompt.read("Again: ") != password {
            throw CLIError.usage("The passwords differ.")
        }
        return password
    }
}

/// `couchette encrypt -w DB`: encrypts a plain database (or changes the key of an encrypted one: `rekey`).
struct EncryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt", abstract: "Encrypt the database with a new password or key (rekey: change it).",
        aliases: ["rekey"])

    @OptionGroup var options: DatabaseOptions

    @Option(help: "Read the new password from this file (its first line).")
    var newPasswordFile: String?

    @Option(help: "The new raw key, 64 hex digits.")
    var newKeyHex: String?

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            try database.changeEncryptionKey(try newKey(passwordFile: newPasswordFile, keyHex: newKeyHex))
            FileHandleOutput.standardOutput("Encrypted with the new key.\n")
        }
    }
}

/// `couchette decrypt -w DB`: removes a database's encryption.
struct DecryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt", abstract: "Remove the database's encryption.")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            try database.changeEncryptionKey(nil)
            FileHandleOutput.standardOutput("Decrypted.\n")
        }
    }
}

// MARK: - Index commands

/// `couchette mkindex -w DB NAME EXPRESSION...`: a value index, or a full-text index with `--fts`.
struct MakeIndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mkindex", abstract: "Create a value index (or a full-text one with --fts) on expressions.")

    @OptionGroup var options: DatabaseOptions

    @Flag(help: "A full-text index.")
    var fts = false

    @Option(help: "The full-text index's language (stemming), e.g. english.")
    var language: String?

    @Argument(help: "The index name.")
    var name: String

    @Argument(help: "The indexed expressions, e.g. type name.")
    var expressions: [String]

    func run() throws {
        try reportingErrors {
            guard !expressions.isEmpty else { throw CLIError.usage("Give at least one expression.") }
            let database = try options.open(writing: true)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            let config: any IndexConfiguration =
                fts ? FullTextIndexConfiguration(expressions, language: language) : ValueIndexConfiguration(expressions)
            try collection.createIndex(withName: name, config: config)
            FileHandleOutput.standardOutput("Created index \(name)\n")
        }
    }
}

/// `couchette rmindex -w DB NAME`: deletes an index.
struct RemoveIndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rmindex", abstract: "Delete an index.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The index name.")
    var name: String

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            guard try collection.indexes().contains(name) else { throw CLIError.notFound("No index \(name)") }
            try collection.deleteIndex(forName: name)
            FileHandleOutput.standardOutput("Deleted index \(name)\n")
        }
    }
}

/// `couchette lsindex DB`: the collection's indexes.
struct ListIndexesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lsindex", abstract: "List the collection's indexes.")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            let names = try options.collection(in: database).indexes().sorted()
            FileHandleOutput.standardOutput(
                options.json ? JSONValue.array(names.map(JSONValue.string)).serializedString() + "\n"
                    : names.map { $0 + "\n" }.joined())
        }
    }
}

/// `couchette reindex -w DB`: rebuilds every index.
struct ReindexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reindex", abstract: "Rebuild every index.")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            try database.performMaintenance(type: .reindex)
            FileHandleOutput.standardOutput("Reindexed.\n")
        }
    }
}
