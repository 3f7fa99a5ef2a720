import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - StorageBackend

/// The storages the shared storage tests run against: SQLite in memory (grants in ``MemoryGrantIndex``) and in a file
/// (grants in the `grants` table), and PostgreSQL on the tests' private server (a new database for each storage).
enum StorageBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case sqliteFile
    case postgres

    var testDescription: String { rawValue }

    /// A `server` location for a new, empty database of this backend (made off Swift's cooperative threads:
    /// starting the server and `createdb` wait for other processes).
    func newLocation() async throws -> StorageLocation {
        switch self {
        case .sqlite: .memory
        case .sqliteFile:
            .directory(
                (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-storage-\(UUID().uuidString)"))
        case .postgres: try StorageLocation(parsing: try await PostgresServer.sharedServer().newDatabase())
        }
    }

    /// Runs `body` with a new, empty storage, closed after, on a thread of its own: PostgreSQL calls wait for the
    /// server, and a test holding one of Swift's few cooperative threads for its length stalls every other test.
    func withStorage(
        databaseName: String = "db", _ body: @escaping @Sendable (any GatewayStorage) throws -> Void
    ) async throws {
        let location = try await newLocation()
        let storage = try location.openStorage(databaseName: databaseName)
        defer {
            storage.close()
            Self.removeFiles(of: location)
        }
        try await offCooperativeThreads { try body(storage) }
    }

    /// Removes the folder of a ``sqliteFile`` location (nothing for the others), once its storage is closed.
    static func removeFiles(of location: StorageLocation) {
        if case .directory(let directory) = location { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A new, empty storage (in memory or PostgreSQL: a ``sqliteFile`` one leaves its folder behind).
    func makeStorage(databaseName: String = "db") async throws -> any GatewayStorage {
        try await newLocation().openStorage(databaseName: databaseName)
    }
}
