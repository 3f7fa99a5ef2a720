import ArgumentParser
import Couchette
import Foundation

// MARK: - ExportCommand

/// `couchette export DB FILE`: every document as a JSON line `{"_id": …, …body}` (`-` for standard output), or as
/// files of a folder. The same as `cp DB FILE`.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every document as JSON lines (one document a line; - for standard output) or into a folder/.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The JSON-lines file to write (.json, .jsonl or -), or a folder/.")
    var file: String

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            try Self.export(try options.collection(in: database), to: file, kind: DocumentFiles.kind(of: file) ?? .jsonLines)
        }
    }

    /// Writes the collection's documents to `path`, with progress; reports the count on standard error.
    static func export(_ collection: Collection, to path: String, kind: DocumentFiles.Kind) throws {
        let writer = try DocumentFiles.Writer(path, kind: kind)
        let progress = path == "-" ? nil : ProgressReporter(unit: "documents")
        let count = try DocumentFiles.forEachDocument(of: collection, progress: progress, bytes: { writer.bytes }) { id, members in
            try writer.write(id: id, members: members)
        }
        try writer.close()
        progress?.finish()
        if path != "-" { FileHandleOutput.standardError("Exported \(count) documents to \(path)\n") }
    }
}

// MARK: - ImportCommand

/// `couchette import -w DB FILE`: JSON lines (or a folder's files) into the collection, each document with `_id`
/// (generated when absent); existing documents are updated unless `--keep` leaves them. The same as `cp FILE DB`.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Save the documents of a JSON-lines file (one document a line; - for standard input) or a folder/.")

    @OptionGroup var options: DatabaseOptions

    @Flag(help: "Leave documents that exist already as they are.")
    var keep = false

    @Argument(help: "The JSON-lines file to read (.json, .jsonl or -), or a folder/.")
    var file: String

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            try Self.import(from: file, kind: DocumentFiles.kind(of: file) ?? .jsonLines, into: try options.collection(in: database),
                keep: keep)
        }
    }

    /// Saves the documents of `path` into `collection` in one transaction, with progress; prints the counts.
    static func `import`(from path: String, kind: DocumentFiles.Kind, into collection: Collection, keep: Bool) throws {
        var saved = 0
        var kept = 0
        let progress = ProgressReporter(unit: "documents")
        try collection.database.inBatch {
            try DocumentFiles.read(path, kind: kind, progress: progress) { id, members in
                if try DocumentFiles.save(id: id, members: members, into: collection, keepExisting: keep) {
                    saved += 1
                } else {
                    kept += 1
                }
            }
        }
        progress.finish()
        FileHandleOutput.standardOutput("Imported \(saved) documents\(kept > 0 ? ", kept \(kept) existing" : "")\n")
    }
}
