import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - StorageBackend

/// The storages the shared storage tests run against: SQLite in memory, and PostgreSQL on the tests' private server
/// (a new database for each storage).
enum StorageBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A `server` location for a new, empty database of this backend.
    func newLocation() throws -> StorageLocation {
        switch self {
        case .sqlite: .memory
        case .postgres: try StorageLocation(parsing: try PostgresServer.shared().createDatabase())
        }
    }

    /// A new, empty storage.
    func makeStorage(databaseName: String = "db") throws -> any GatewayStorage {
        try newLocation().openStorage(databaseName: databaseName)
    }
}
