/// The naming rules for databases, scopes and collections.
enum DatabaseNames {
    /// The folder extension of a database.
    static let folderExtension = "couchette"

    /// Checks a database name: 1 to 240 characters; no `/`, `\`, `:` or control characters; not starting
    /// with `.`.
    ///
    /// - Throws: `.badInput` (400) naming the rule broken.
    static func validateDatabaseName(_ name: String) throws(CouchetteError) {
        guard !name.isEmpty, name.count <= 240 else {
            throw CouchetteError(.badInput, message: "Invalid database name \"\(name)\": must be 1 to 240 characters")
        }
        guard !name.hasPrefix("."),
            !name.unicodeScalars.contains(where: { "/\\:".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw CouchetteError(
                .badInput,
                message: "Invalid database name \"\(name)\": must not start with '.' or contain '/', '\\', ':' or control characters")
        }
    }

    /// Checks a scope or collection name as Couchbase Lite does: 1 to 251 characters among `A-Z a-z 0-9 _ - %`,
    /// not starting with `_` or `%` (except `_default`).
    ///
    /// - Throws: `.badInput` (400) naming the rule broken.
    static func validateCollectionName(_ name: String, kind: String) throws(CouchetteError) {
        if name == Database.defaultCollectionName { return }
        let allowed = name.unicodeScalars.allSatisfy { scalar in
            (scalar >= "A" && scalar <= "Z") || (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9")
                || scalar == "_" || scalar == "-" || scalar == "%"
        }
        guard !name.isEmpty, name.count <= 251, allowed, !name.hasPrefix("_"), !name.hasPrefix("%") else {
            throw CouchetteError(
                .badInput,
                message: "Invalid \(kind) name \"\(name)\": use 1 to 251 of A-Z a-z 0-9 _ - %, not starting with _ or %")
        }
    }

    /// Checks a document ID: 1 to 250 bytes of UTF-8, not starting with `_`.
    ///
    /// - Throws: `.badInput` (400).
    static func validateDocumentID(_ id: String) throws(CouchetteError) {
        guard !id.isEmpty, id.utf8.count <= 250 else {
            throw CouchetteError(.badInput, message: "Invalid document ID: must be 1 to 250 bytes")
        }
        guard !id.hasPrefix("_") else {
            throw CouchetteError(.badInput, message: "Invalid document ID \"\(id)\": must not start with '_'")
        }
    }
}
