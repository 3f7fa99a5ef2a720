import CouchetteSQLite
import Foundation

/// The Lite database's read connections beside its writer (``CouchetteSQLite/ReaderPool``): up to four readers of
/// the file a writer has open, each read in a read transaction of its own.
typealias StorageReaders = ReaderPool<DatabaseStorage>

extension ReaderPool where Reader == DatabaseStorage {
    /// Readers of the database file at `path`, opened with `options` (its key).
    convenience init(path: String, options: StorageOptions) {
        self.init(
            open: { try DatabaseStorage(readerOf: path, options: options) }, begin: { try $0.beginRead() },
            end: { $0.endRead() }, close: { $0.close() })
    }

    /// Runs `body` on a reader inside a read transaction; nil when the pool is closed (or closes while waiting).
    ///
    /// - Throws: What opening a connection or `body` throws, as ``CouchetteError``.
    func read<T>(_ body: (DatabaseStorage) throws -> T) throws(CouchetteError) -> T? {
        do {
            return try withReader(body)
        } catch {
            throw DatabaseStorage.translate(error)
        }
    }
}
