import ArgumentParser
import Couchette
import CouchetteCore
import Foundation

// MARK: - InfoCommand

/// `couchette info DB`: the file, its size, encryption, and per collection its documents, deletions, conflicts
/// and last sequence.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Show a database's file, size, encryption and collections.")

    @OptionGroup var options: DatabaseOptions

    func run() throws {
        try reportingErrors {
            let database = try options.open()
            defer { try? database.close() }
            let folder = database.path ?? options.database
            var collections: [JSONValue] = []
            for scope in try database.scopes() {
                for collection in try database.collections(scope: scope.name) {
                    let entries = try collection.changes(since: 0, includeConflicts: true)
                    let current = entries.filter(\.isCurrentRevision)
                    let conflicted = Set(entries.filter { !$0.isCurrentRevision && !$0.isDeletion }.map(\.documentID))
                    collections.append([
                        "name": .string(collection.fullName), "documents": .int(Int64(collection.count)),
                        "deleted": .int(Int64(current.filter(\.isDeletion).count)),
                        "conflicted": .int(Int64(conflicted.count)),
                        "last_sequence": .int(Int64(collection.lastSequence)),
                    ])
                }
            }
            let info: JSONValue = [
                "path": .string(folder), "size": .int(Int64(Self.size(of: folder))),
                "encrypted": .bool(database.config.encryptionKey != nil), "uuid": .string(database.publicUUID),
                "collections": .array(collections),
            ]
            if options.json {
                FileHandleOutput.standardOutput(info.serializedString() + "\n")
                return
            }
            var text = "Database:   \(folder)\n"
            text += "Size:       \(Self.size(of: folder)) bytes\n"
            text += "Encrypted:  \(database.config.encryptionKey != nil ? "yes" : "no")\n"
            text += "UUID:       \(database.publicUUID)\n"
            text += "Collections:\n"
            for entry in collections {
                let name = entry["name"]?.stringValue ?? ""
                let documents = entry["documents"]?.intValue ?? 0
                let deleted = entry["deleted"]?.intValue ?? 0
                let conflicted = entry["conflicted"]?.intValue ?? 0
                let sequence = entry["last_sequence"]?.intValue ?? 0
                text += "  \(name): \(documents) documents, \(deleted) deleted, \(conflicted) in conflict, last sequence \(sequence)\n"
            }
            FileHandleOutput.standardOutput(text)
        }
    }

    /// The bytes of the files under `folder`.
    static func size(of folder: String) -> Int {
        guard let files = FileManager.default.enumerator(atPath: folder) else { return 0 }
        var total = 0
        while let file = files.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: "\(folder)/\(file)")
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += attributes?[.size] as? Int ?? 0 }
        }
        return total
    }
}
