import ArgumentParser
import Couchette
import Foundation

// MARK: - ExportCommand

/// `couchette export DB FILE`: every document as a JSON line `{"_id": …, …body}` (`-` for standard output).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write every document as JSON lines (one document a line; - for standard output).")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The JSON-lines file to write, or -.")
    var file: String

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            let changes = try collection.changes(since: 0).filter { !$0.isDeletion }
            var text = ""
            for change in changes {
                guard let document = try collection.document(id: change.documentID) else { continue }
                var members = document.toJSONValue().objectValue ?? [:]
                members["_id"] = .string(change.documentID)
                text += JSONValue.object(members).serializedString() + "\n"
            }
            if file == "-" {
                FileHandleOutput.standardOutput(text)
            } else {
                do { try text.write(toFile: file, atomically: true, encoding: .utf8) } catch {
                    throw CLIError.failed("Cannot write \(file): \(error.localizedDescription)")
                }
                FileHandleOutput.standardError("Exported \(changes.count) documents to \(file)\n")
            }
        }
    }
}

// MARK: - ImportCommand

/// `couchette import -w DB FILE`: JSON lines into the collection, each line a document with `_id` (generated when
/// absent); existing documents are updated unless `--existing` keeps them.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Save the documents of a JSON-lines file (one document a line; - for standard input).")

    @OptionGroup var options: DatabaseOptions

    @Flag(help: "Leave documents that exist already as they are.")
    var existing = false

    @Argument(help: "The JSON-lines file to read, or -.")
    var file: String

    func run() throws {
        try reportingErrors {
            let data: Data
            if file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let read = FileManager.default.contents(atPath: file) else { throw CLIError.notFound("Cannot read \(file)") }
                data = read
            }
            let database = try options.open(writing: true)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            var saved = 0
            var skipped = 0
            var lineNumber = 0
            try database.inBatch {
                for line in data.split(separator: UInt8(ascii: "\n")) where !line.allSatisfy({ $0 == 32 || $0 == 13 }) {
                    lineNumber += 1
                    guard case .object(var members)? = try? JSONValue(parsing: Array(line)) else {
                        throw CLIError.usage("Line \(lineNumber) is not a JSON object.")
                    }
                    let id = members.removeValue(forKey: "_id")?.stringValue
                    members.removeValue(forKey: "_rev")
                    let current = try id.flatMap { try collection.document(id: $0) }
                    if current != nil && existing {
                        skipped += 1
                        continue
                    }
                    let document = current?.toMutable() ?? MutableDocument(id: id)
                    _ = try document.setJSON(JSONValue.object(members).serializedString())
                    try collection.save(document: document)
                    saved += 1
                }
            }
            FileHandleOutput.standardOutput("Imported \(saved) documents\(skipped > 0 ? ", kept \(skipped) existing" : "")\n")
        }
    }
}
