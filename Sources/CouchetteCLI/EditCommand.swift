import ArgumentParser
import Couchette
import Foundation

// MARK: - EditCommand

/// `couchette edit -w DB ID`: opens the document's body (pretty JSON; `{}` for a new document) in `$VISUAL` or
/// `$EDITOR` (`vi` when neither is set) and saves what the editor leaves, unless nothing changed. The save fails
/// if the document changed meanwhile; a body that is not a JSON object is not saved, and its file is kept.
struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit", abstract: "Edit a document's JSON in $EDITOR and save it.")

    @OptionGroup var options: DatabaseOptions

    @Argument(help: "The document ID (after -- when it starts with -).")
    var id: String

    func run() throws {
        try reportingErrors {
            let database = try options.open(writing: true)
            defer { try? database.close() }
            let collection = try options.collection(in: database)
            let current = try collection.document(id: id)
            let original = (current?.toJSONValue() ?? .object([:])).serializedString(prettyPrinted: true) + "\n"
            let safeName = id.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? String($0) : "_" }.joined()
            let file = (NSTemporaryDirectory() as NSString)
                .appendingPathComponent("couchette-edit-\(UUID().uuidString.prefix(8))-\(safeName.prefix(40)).json")
            guard FileManager.default.createFile(atPath: file, contents: Data(original.utf8)) else {
                throw CLIError.failed("Cannot write \(file)")
            }
            let environment = ProcessInfo.processInfo.environment
            let editor = environment["VISUAL"] ?? environment["EDITOR"] ?? "vi"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            // The editor setting may hold arguments (`code --wait`): the shell splits it; the file is "$1".
            process.arguments = ["-c", "\(editor) \"$1\"", "couchette-edit", file]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                try? FileManager.default.removeItem(atPath: file)
                throw CLIError.failed("\(editor) exited with \(process.terminationStatus); nothing saved.")
            }
            guard let edited = FileManager.default.contents(atPath: file) else { throw CLIError.failed("Cannot read \(file)") }
            if String(decoding: edited, as: UTF8.self) == original {
                try? FileManager.default.removeItem(atPath: file)
                FileHandleOutput.standardOutput("No changes.\n")
                return
            }
            guard case .object(var members)? = try? JSONValue(parsing: Array(edited)) else {
                throw CLIError.usage("The edit is not a JSON object; nothing saved (it is kept in \(file)).")
            }
            members["_id"] = nil
            members["_rev"] = nil
            let document = current?.toMutable() ?? MutableDocument(id: id)
            _ = try document.setJSON(JSONValue.object(members).serializedString())
            guard try collection.save(document: document, concurrencyControl: .failOnConflict) else {
                throw CLIError.failed("\(id) changed meanwhile; nothing saved (the edit is kept in \(file)).")
            }
            try? FileManager.default.removeItem(atPath: file)
            FileHandleOutput.standardOutput("Saved \(id) \(document.revisionID ?? "")\n")
        }
    }
}
