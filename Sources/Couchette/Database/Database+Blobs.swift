extension Database {
    /// The console, file and custom log sinks of every database.
    public static var log: Log { Log.shared }

    /// Stores a blob's content now (saving a document that holds it does the same).
    public func saveBlob(blob: Blob) throws {
        guard let store = currentBlobStore else { throw CouchetteError(.notOpen, message: "Database \"\(name)\" is closed") }
        guard !config.readOnly else { throw CouchetteError(.forbidden, message: "The database is read-only") }
        try blob.install(into: store)
    }

    /// The blob a blob dictionary refers to, or nil when its content is not stored here.
    ///
    /// - Throws: `.badInput` when `properties` is not a blob dictionary.
    public func getBlob(properties: [String: Any]) throws -> Blob? {
        guard Blob.isBlob(properties: properties) else {
            throw CouchetteError(.badInput, message: "Not a blob dictionary (needs \"@type\": \"blob\" and a digest)")
        }
        guard let store = currentBlobStore else { throw CouchetteError(.notOpen, message: "Database \"\(name)\" is closed") }
        let blob = try Blob(properties: properties, store: store)
        return blob.content == nil ? nil : blob
    }
}
