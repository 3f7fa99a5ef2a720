import CouchetteCore

/// `_local` documents: not replicated, no revision history kept; replicators keep their checkpoints here.
extension Database {
    /// A local document's properties (with `_id` and `_rev`), or nil.
    public func localDocument(withID id: String) throws -> [String: Any]? {
        try read { storage in
            guard let (revision, body) = try storage.localDocument(id: id) else { return nil }
            var properties = (try JSONValue(parsing: body)).objectValue?.mapValues(DocumentValues.value(from:)) ?? [:]
            properties["_id"] = id
            properties["_rev"] = revision
            return properties
        }
    }

    /// Saves a local document. When `_rev` is given it must match the stored one (409 otherwise); the new
    /// revision is `0-N`.
    ///
    /// - Returns: The new revision ID.
    @discardableResult
    public func putLocalDocument(_ properties: [String: Any], withID id: String) throws -> String {
        try write { storage in
            let current = try storage.localDocument(id: id)?.revision
            if let expected = properties["_rev"] as? String, expected != current {
                throw CouchetteError(.conflict, message: "Local document \"\(id)\" was changed")
            }
            let number = current.flatMap { Int($0.split(separator: "-").last ?? "") } ?? 0
            let revision = "0-\(number + 1)"
            let body = try DocumentValues.json(
                from: properties.filter { !$0.key.hasPrefix("_") }, path: "", onBlob: { _ in
                    throw CouchetteError(.badInput, message: "Local documents cannot hold blobs")
                })
            try storage.putLocalDocument(id: id, revision: revision, body: body.serialized())
            return revision
        }
    }

    /// Deletes a local document.
    ///
    /// - Throws: `.notFound` when there is none.
    public func deleteLocalDocument(withID id: String) throws {
        try write { storage in
            guard try storage.removeLocalDocument(id: id) else {
                throw CouchetteError(.notFound, message: "No local document \"\(id)\"")
            }
        }
    }
}
