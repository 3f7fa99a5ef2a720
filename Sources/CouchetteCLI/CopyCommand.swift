import ArgumentParser
import Couchette
import Foundation

// MARK: - CopyCommand

/// `couchette cp SOURCE DESTINATION` (cblite's `cp`): copies documents between a database and a JSON-lines file, a
/// folder of JSON files, another database or a remote database URL, with a progress bar. One side must be a
/// `.couchette` database; a destination database is created unless `--existing`.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cp",
        abstract: "Copy documents between a database and a JSON-lines file, a folder/, another database or a URL.",
        discussion: """
            One side is a .couchette database. The other: a .json/.jsonl file (one document a line; - for standard \
            input or output), a folder/ (one ID.json file a document), another .couchette database, or a remote \
            database http(s):// or ws(s):// URL (replication: push from the database, pull into it; --bidi, \
            --continuous, --user). A destination database is created when missing (-x: it must exist); --bidi also writes \
            the source, which then needs --writeable (-w).
            """,
        aliases: ["copy"])

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "Where the documents go.")
    var destination: String

    @Flag(name: [.customShort("x"), .long], help: "The destination database must exist (by default it is created).")
    var existing = false

    @Flag(help: "Leave documents that exist already in the destination as they are (files into a database).")
    var keep = false

    @Flag(help: "Replicate both ways (with a URL or another database).")
    var bidi = false

    @Flag(help: "Keep replicating until interrupted (with a URL or another database).")
    var continuous = false

    @Option(help: "Credentials for the remote, NAME or NAME:PASSWORD (the password is asked for when not given).")
    var user: String?

    func run() throws {
        try reportingErrors {
            let source = options.database
            let sourceIsFile = DocumentFiles.kind(of: source) != nil || ReplicationRun.isRemote(source)
            if sourceIsFile {
                // Into the database named second.
                var into = options
                into.database = destination
                guard DocumentFiles.kind(of: destination) == nil, !ReplicationRun.isRemote(destination) else {
                    throw CLIError.usage("One side of cp must be a .couchette database.")
                }
                let database = try into.openOrCreate(mustExist: existing)
                defer { try? database.close() }
                let collection = try into.collection(in: database)
                if ReplicationRun.isRemote(source) {
                    try ReplicationRun(other: source, type: bidi ? .pushAndPull : .pull, continuous: continuous, user: user)
                        .run(collection: collection, options: into)
                } else {
                    try ImportCommand.import(from: source, kind: DocumentFiles.kind(of: source)!, into: collection, keep: keep)
                }
                return
            }
            let database = try options.open(writing: bidi)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            if let kind = DocumentFiles.kind(of: destination) {
                try ExportCommand.export(collection, to: destination, kind: kind)
            } else {
                var run = ReplicationRun(other: destination, type: bidi ? .pushAndPull : .push, continuous: continuous, user: user)
                run.otherMustExist = existing
                try run.run(collection: collection, options: options)
            }
        }
    }
}
