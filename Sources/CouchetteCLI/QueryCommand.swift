import ArgumentParser
import Couchette
import CouchetteCore
import Foundation

// MARK: - QueryCommand

/// `couchette query DB "SQL++"`: runs a query and prints its rows, one JSON object a line (`--json`: one array).
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query", abstract: "Run a SQL++ query; each row is printed as JSON.")

    @OptionGroup var options: DatabaseOptions

    @Flag(help: "Print the query plan instead of running it.")
    var explain = false

    @Option(help: "Skip this many rows.")
    var offset = 0

    @Option(help: "Print at most this many rows.")
    var limit: Int?

    @Argument(help: "The SQL++ query, e.g. \"SELECT META().id, name FROM _ WHERE type = 'task-list'\".")
    var query: String

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            let compiled: Query
            do {
                compiled = try database.createQuery(query)
            } catch let error as CouchetteError {
                throw CLIError.usage("Invalid query: \(error.message)")
            }
            if explain {
                FileHandleOutput.standardOutput(try compiled.explain() + "\n")
                return
            }
            let rows = try compiled.execute().allResults().dropFirst(max(0, offset)).prefix(limit ?? Int.max)
            if options.json {
                FileHandleOutput.standardOutput("[" + rows.map { $0.toJSON() }.joined(separator: ",") + "]\n")
            } else {
                FileHandleOutput.standardOutput(rows.map { $0.toJSON() + "\n" }.joined())
            }
        }
    }
}
