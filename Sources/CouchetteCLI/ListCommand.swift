import ArgumentParser
import Couchette
import CouchetteCore
import Foundation

// MARK: - ListCommand

/// `couchette ls DB`: the documents, by ID (or sequence), as cblite lists them.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List the documents of a collection.")

    @OptionGroup var options: DatabaseOptions

    @Flag(name: .short, help: "Long listing: revision, sequence, flags (deleted, conflict).")
    var long = false

    @Option(help: "Skip this many documents first.")
    var offset = 0

    @Option(help: "List at most this many documents.")
    var limit: Int?

    @Flag(help: "Descending order.")
    var desc = false

    @Flag(help: "Order by sequence instead of ID.")
    var seq = false

    @Flag(help: "Include deleted documents.")
    var del = false

    @Flag(help: "Only documents in conflict.")
    var conf = false

    @Flag(help: "Print each document's body too.")
    var body = false

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            let entries = try collection.changes(since: 0, includeConflicts: true)
            // A document is in conflict when a leaf other than its current revision is live.
            let conflicted = Set(entries.filter { !$0.isCurrentRevision && !$0.isDeletion }.map(\.documentID))
            var changes = entries.filter(\.isCurrentRevision)
            if !del { changes.removeAll(where: \.isDeletion) }
            if conf { changes.removeAll { !conflicted.contains($0.documentID) } }
            if !seq { changes.sort { $0.documentID < $1.documentID } }
            if desc { changes.reverse() }
            let page = changes.dropFirst(max(0, offset)).prefix(limit ?? Int.max)
            var output = ""
            if options.json {
                var rows: [JSONValue] = []
                for change in page {
                    var row: [String: JSONValue] = [
                        "id": .string(change.documentID), "rev": .string(change.revisionID),
                        "sequence": .int(Int64(change.sequence)),
                    ]
                    if change.isDeletion { row["deleted"] = true }
                    if conflicted.contains(change.documentID) { row["conflict"] = true }
                    if body, let document = try collection.document(id: change.documentID) {
                        row["body"] = document.toJSONValue()
                    }
                    rows.append(.object(row))
                }
                output = JSONValue.array(rows).serializedString() + "\n"
            } else {
                for change in page {
                    var line = change.documentID
                    if long {
                        let flags = [
                            change.isDeletion ? "deleted" : nil, conflicted.contains(change.documentID) ? "conflict" : nil,
                        ].compactMap { $0 }
                        line += "  \(change.revisionID)  seq \(change.sequence)\(flags.isEmpty ? "" : "  [" + flags.joined(separator: ", ") + "]")"
                    }
                    if body, let document = try collection.document(id: change.documentID) {
                        line += "  " + document.toJSON()
                    }
                    output += line + "\n"
                }
            }
            FileHandleOutput.standardOutput(output)
        }
    }
}

// MARK: - ListCollectionsCommand

/// `couchette lscoll DB`: the scopes and collections with their document counts.
struct ListCollectionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lscoll", abstract: "List the collections, SCOPE.NAME, with their document counts.")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            var entries: [(String, UInt64)] = []
            for scope in try database.scopes() {
                for collection in try database.collections(scope: scope.name) {
                    entries.append((collection.fullName, collection.count))
                }
            }
            if options.json {
                let rows = entries.map { JSONValue.object(["name": .string($0.0), "documents": .int(Int64($0.1))]) }
                FileHandleOutput.standardOutput(JSONValue.array(rows).serializedString() + "\n")
            } else {
                FileHandleOutput.standardOutput(entries.map { "\($0.0)  \($0.1) documents\n" }.joined())
            }
        }
    }
}

// MARK: - MakeCollectionCommand

/// `couchette mkcoll -w DB SCOPE.NAME`: creates a collection.
struct MakeCollectionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mkcoll", abstract: "Create a collection, SCOPE.NAME or NAME (in the default scope).")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The new collection: SCOPE.NAME or NAME.")
    var name: String

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            let (scope, collection) = DatabaseOptions.scopeAndName(name)
            let created = try database.createCollection(name: collection, scope: scope)
            FileHandleOutput.standardOutput("Created \(created.fullName)\n")
        }
    }
}
