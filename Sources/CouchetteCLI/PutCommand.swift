import ArgumentParser
import Couchette
import CouchetteCore
import Foundation

// MARK: - PutCommand

/// `couchette put -w DB ID JSON`: saves a document's body (`-` reads it from standard input).
struct PutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Save a document: its ID and JSON body (- reads standard input).")

    @OptionGroup var options: DatabaseOptions

    @Flag(help: "Fail unless the document is new.")
    var create = false

    @Flag(help: "Fail unless the document exists.")
    var update = false

    @Argument(help: "The document ID.")
    var id: String

    @Argument(help: "The JSON body, or - for standard input.")
    var body: String

    func run() throws {
        try reportingErrors {
            if create && update { throw CLIError.usage("--create and --update exclude each other.") }
            let text = body == "-" ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) : body
            guard case .object? = try? JSONValue(parsing: Array(text.utf8)) else {
                throw CLIError.usage("The body must be a JSON object.")
            }
            let database = try options.open(writing: true)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            let existing = try collection.document(id: id)
            if create && existing != nil { throw CLIError.failed("\(id) exists already (--create).") }
            if update && existing == nil { throw CLIError.notFound("Not found: \(id) (--update).") }
            let document = existing?.toMutable() ?? MutableDocument(id: id)
            _ = try document.setJSON(text)
            try collection.save(document: document)
            let saved = try collection.document(id: id)
            FileHandleOutput.standardOutput(
                options.json
                    ? JSONValue.object(["id": .string(id), "rev": .string(saved?.revisionID ?? "")]).serializedString() + "\n"
                    : "Saved \(id) as \(saved?.revisionID ?? "?")\n")
        }
    }
}

// MARK: - RemoveCommand

/// `couchette rm -w DB ID...`: deletes documents (tombstones that replicate).
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete documents (a deletion that replicates).")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The document IDs (after -- when one starts with -).")
    var ids: [String]

    func run() throws {
        try reportingErrors {
            try eachDocument(ids, options: options) { collection, id in
                guard let document = try collection.document(id: id) else { return false }
                try collection.delete(document: document)
                FileHandleOutput.standardOutput("Deleted \(id)\n")
                return true
            }
        }
    }
}

// MARK: - PurgeCommand

/// `couchette purge -w DB ID...`: removes documents entirely, history included (nothing replicates).
struct PurgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Purge documents: remove them entirely, history included.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The document IDs.")
    var ids: [String]

    func run() throws {
        try reportingErrors {
            try eachDocument(ids, options: options) { collection, id in
                guard try collection.revisionTree(documentID: id) != nil else { return false }
                try collection.purge(id: id)
                FileHandleOutput.standardOutput("Purged \(id)\n")
                return true
            }
        }
    }
}

/// Opens the database for writing and runs `change` on each document ID of `ids` (false: not found); then fails
/// with "not found" naming those missing.
private func eachDocument(
    _ ids: [String], options: DatabaseOptions, _ change: (Collection, String) throws -> Bool
) throws {
    let database = try options.open(writing: true)
    defer { try? database.close() }
    let collection = try options.collection(in: database)
    var missing: [String] = []
    for id in ids where try !change(collection, id) { missing.append(id) }
    if !missing.isEmpty { throw CLIError.notFound("Not found: \(missing.joined(separator: ", "))") }
}
