// MARK: - Opening storage

extension StorageLocation {
    /// Opens the storage of database `databaseName` at this location: ``SQLiteGatewayStorage`` for `walrus:` and
    /// `sqlite:`, ``PostgresGatewayStorage`` for `postgres://`.
    ///
    /// - Throws: 500 when the storage cannot be opened or was written by a newer gateway; 503 when PostgreSQL
    ///   cannot be reached.
    public func openStorage(databaseName: String) throws(GatewayError) -> any GatewayStorage {
        if case .postgres(let location) = self {
            return try PostgresGatewayStorage(location: location, databaseName: databaseName)
        }
        return try SQLiteGatewayStorage(location: self, databaseName: databaseName)
    }
}
