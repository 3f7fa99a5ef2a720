import CouchetteGateway
import CouchetteSQLite
import Foundation

/// A gateway SQLite storage in a new file where writing an index row for channel `boom` fails, so that a document
/// write can fail halfway: after the rows of the document and its other channels were written.
enum FailingChannelStorage {
    /// Runs `body` with the storage and a second connection to the same file, then deletes the file.
    static func run(_ body: (SQLiteGatewayStorage, Connection) throws -> Void) throws {
        let name = "gateway-fail-\(UUID().uuidString).sqlite3"
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent(name)
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        try SQLiteGatewayStorage(path: path).close()
        let connection = try Connection(path: path)
        defer { connection.close() }
        try connection.execute(
            """
            CREATE TRIGGER boom BEFORE INSERT ON channel_changes WHEN NEW.channel = 'boom'
            BEGIN SELECT RAISE(ABORT, 'boom'); END;
            """)
        let storage = try SQLiteGatewayStorage(path: path)
        defer { storage.close() }
        try body(storage, connection)
    }
}
