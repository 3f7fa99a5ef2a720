import CouchetteCore
import CouchetteSQLite
import Foundation
import Synchronization

/// An open database: scopes → collections → documents, stored in the folder `NAME.couchette/` (an SQLite
/// file in WAL mode and an `Attachments/` folder of blobs named by digest).
///
/// Every call is synchronous, thread-safe and serialized per database, as in Couchbase Lite.
///
/// ```swift
/// var config = DatabaseConfiguration()
/// config.directory = "/var/lib/todo"
/// let db = try Database(name: "todo", config: config)
/// let lists = try db.defaultCollection()
/// ```
public final class Database: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The library's version.
    public static let version = "0.1.0"

    /// The name of the default scope, `_default`.
    public static let defaultScopeName = "_default"
    /// The name of the default collection, `_default`.
    public static let defaultCollectionName = "_default"
    /// The file name of the SQLite database inside the folder.
    static let databaseFileName = "db.sqlite3"
    /// The folder of blobs inside the database folder.
    static let attachmentsFolderName = "Attachments"

    /// The database's name.
    public let name: String
    /// The configuration it was opened with.
    public let config: DatabaseConfiguration

    /// Guards everything below; recursive so that listeners' synchronous callbacks (conflict handlers,
    /// `inBatch` blocks) may call back into the database.
    let lock = NSRecursiveLock()
    /// The writer: every write, and the reads of this thread's own write transaction.
    var storage: DatabaseStorage?
    /// Read connections beside the writer (``read(_:)``); nil while closed or changing keys.
    let readers = Mutex<StorageReaders?>(nil)
    /// The IDs of the collections that exist, readable without the lock (a read checks its collection with them).
    let liveCollectionIDs = Mutex<Set<Int64>>([])
    private(set) var folderPath: String?
    /// The key the file is encrypted with now (nil: plain).
    var currentKey: EncryptionKey?
    var blobStore: BlobStore?
    var collectionRows: [Int64: DatabaseStorage.CollectionRow] = [:]
    var collectionObjects: [Int64: Collection] = [:]
    var transactionDepth = 0
    var pendingChanges: [(change: DocumentChange, external: Bool)] = []
    var sequencesAtBegin: [Int64: UInt64] = [:]
    /// The last sequence given out in any collection: sequences are unique across the database (each
    /// collection's are increasing, with gaps where other collections changed).
    var lastSequence: UInt64 = 0
    var lastSequenceAtBegin: UInt64 = 0
    let notifier = ChangeNotifier()
    var expirySweeper: ExpirySweeper?
    /// The view objects made in this session, by `"<collection id>/<name>"`.
    var mapReduceViews: [String: MapReduceView] = [:]
    private(set) var storedPublicUUID = ""
    private(set) var storedPrivateUUID = ""

    /// Opens the database `name` in `config.directory`, creating it unless `config.create` is false.
    ///
    /// - Throws: `.badInput` for an invalid name, `.notFound` when missing and not created,
    ///   `.unsupported` when a newer Couchette wrote it, `.wrongEncryptionKey` when the file is not a
    ///   database.
    public init(name: String, config: DatabaseConfiguration = DatabaseConfiguration()) throws {
        try DatabaseNames.validateDatabaseName(name)
        self.name = name
        self.config = config
        let folder = Database.folderPath(name: name, directory: config.directory)
        let manager = FileManager.default
        let key = try config.resolvedEncryptionKey()
        let options = try config.storageOptions(key: key)  // a malformed key touches nothing on disk
        var createdFolder = false
        if !manager.fileExists(atPath: folder) {
            guard config.create, !config.readOnly else {
                throw CouchetteError(.notFound, message: "Database \"\(name)\" does not exist")
            }
            do {
                try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
                createdFolder = true
            } catch {
                throw CouchetteError(.io, message: "Cannot create \(folder): \(error.localizedDescription)")
            }
        }
        // A create that fails leaves the disk as it was.
        func removeCreatedFolder() { if createdFolder { try? manager.removeItem(atPath: folder) } }
        let path = (folder as NSString).appendingPathComponent(Database.databaseFileName)
        currentKey = key
        let storage: DatabaseStorage
        do {
            // A key change killed before its commit leaves copies to delete; after it, renames to finish.
            try KeyChangeFiles(folder: folder).recover()
            storage = try DatabaseStorage(path: path, options: options)
        } catch {
            removeCreatedFolder()
            throw error
        }
        self.storage = storage
        self.folderPath = folder
        do {
            blobStore = try BlobStore(
                directory: URL(fileURLWithPath: folder).appendingPathComponent(Database.attachmentsFolderName),
                cipher: Database.blobCipher(pageKey: storage.pageKey()))
            try loadMetadata(storage)
            try reloadCollections(storage)
            lastSequence = try storage.databaseLastSequence()
            readers.withLock { $0 = StorageReaders(path: path, options: options) }
        } catch {
            storage.close()
            self.storage = nil
            removeCreatedFolder()
            throw error
        }
        Log.shared.emit(.info, .database, "Opened database \(name)")
        if !config.readOnly {
            let sweeper = ExpirySweeper(database: self)
            expirySweeper = sweeper
            sweeper.schedule()
        }
    }

    private func loadMetadata(_ storage: DatabaseStorage) throws(CouchetteError) {
        if let publicUUID = try storage.metaValue("public_uuid"), let privateUUID = try storage.metaValue("private_uuid") {
            storedPublicUUID = publicUUID
            storedPrivateUUID = privateUUID
        } else if !config.readOnly {
            storedPublicUUID = UUID().uuidString.lowercased()
            storedPrivateUUID = UUID().uuidString.lowercased()
            try storage.setMetaValue("public_uuid", storedPublicUUID)
            try storage.setMetaValue("private_uuid", storedPrivateUUID)
        }
    }

    func reloadCollections(_ storage: DatabaseStorage) throws(CouchetteError) {
        collectionRows = Dictionary(uniqueKeysWithValues: try storage.collectionRows().map { ($0.id, $0) })
        liveCollectionIDs.withLock { $0 = Set(collectionRows.keys) }
    }

    /// The folder of a database: `DIRECTORY/NAME.couchette`.
    static func folderPath(name: String, directory: String?) -> String {
        let directory = directory ?? DatabaseConfiguration.defaultDirectory
        return (directory as NSString).appendingPathComponent("\(name).\(DatabaseNames.folderExtension)")
    }

    // MARK: - Properties

    /// The database folder's path; nil once closed.
    public var path: String? { lock.withLock { folderPath } }

    /// A UUID identifying this database to peers; changed when the database is copied.
    public var publicUUID: String { lock.withLock { storedPublicUUID } }

    /// A UUID kept private to this database (it names replication checkpoints); changed when copied.
    public var privateUUID: String { lock.withLock { storedPrivateUUID } }

    /// The blob store, when open.
    var currentBlobStore: BlobStore? { lock.withLock { blobStore } }

    public var description: String { "Database(\(name))" }

    public static func == (lhs: Database, rhs: Database) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Access

    /// Runs `body` with a storage to read from: a reader of the pool, in a read transaction of its own, so that it
    /// neither waits for a write in progress nor sees half of one; the writer itself inside this thread's own write
    /// transaction (to see the batch's writes) or while the pool is closed (a key change).
    ///
    /// `body` must not take the database's lock: ``close()`` waits for the reads in progress.
    func read<T>(_ body: (DatabaseStorage) throws -> T) throws(CouchetteError) -> T {
        var inOwnTransaction = false
        if lock.try() {
            // Held by this thread (the lock is recursive) or by nobody: a transaction in progress is this thread's.
            inOwnTransaction = transactionDepth > 0
            lock.unlock()
        }
        if !inOwnTransaction, let pool = readers.withLock({ $0 }), let result = try pool.read(body) {
            return result
        }
        return try withStorage(body)
    }

    /// Closes the read connections (waiting for the reads in progress) until ``resumeReaders()``; reads use the
    /// writer meanwhile. Called without the lock.
    func suspendReaders() {
        let pool = readers.withLock { pool in
            defer { pool = nil }
            return pool
        }
        pool?.close()
    }

    /// Opens a new pool of readers for the open database (with its current key).
    func resumeReaders() {
        lock.withLock {
            guard storage != nil, let folderPath,
                let options = try? config.storageOptions(key: currentKey)
            else { return }
            let path = (folderPath as NSString).appendingPathComponent(Database.databaseFileName)
            readers.withLock { $0 = StorageReaders(path: path, options: options) }
        }
    }

    /// Runs `body` with the open storage, under the lock.
    ///
    /// - Throws: `.notOpen` when the database is closed, or what `body` throws (as ``CouchetteError``).
    func withStorage<T>(_ body: (DatabaseStorage) throws -> T) throws(CouchetteError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let storage else { throw CouchetteError(.notOpen, message: "Database \"\(name)\" is closed") }
        do { return try body(storage) } catch { throw DatabaseStorage.translate(error) }
    }

    // MARK: - Closing and deleting

    /// Closes the database: stops its change streams and expiry timer, then closes the file. Later calls on
    /// it, its collections and documents throw `.notOpen`. Closing twice does nothing.
    ///
    /// - Throws: `.busy` when called inside a transaction (`inBatch`).
    public func close() throws {
        if lock.withLock({ transactionDepth == 0 }) { suspendReaders() }
        let closed: Bool = try lock.withLock { () throws(CouchetteError) -> Bool in
            guard let storage else { return false }
            guard transactionDepth == 0 else {
                throw CouchetteError(.busy, message: "Cannot close the database inside a transaction")
            }
            expirySweeper?.cancel()
            expirySweeper = nil
            // Saved so that the next open finds each collection's last sequence without scanning.
            if !config.readOnly {
                for row in collectionRows.values { try? storage.setLastSequence(row.lastSequence, collectionID: row.id) }
            }
            storage.close()
            self.storage = nil
            blobStore = nil
            folderPath = nil
            collectionObjects.removeAll()
            return true
        }
        if closed {
            notifier.closeAll()
            Log.shared.emit(.info, .database, "Closed database \(name)")
        }
    }

    /// Closes the database and deletes its folder.
    public func delete() throws {
        let folder = Database.folderPath(name: name, directory: config.directory)
        try close()
        try Database.removeFolder(folder)
    }

    /// Deletes a database that is not open.
    ///
    /// - Throws: `.notFound` when there is no such database.
    public static func delete(withName name: String, inDirectory directory: String? = nil) throws {
        try DatabaseNames.validateDatabaseName(name)
        let folder = folderPath(name: name, directory: directory)
        guard FileManager.default.fileExists(atPath: folder) else {
            throw CouchetteError(.notFound, message: "Database \"\(name)\" does not exist")
        }
        try removeFolder(folder)
    }

    private static func removeFolder(_ folder: String) throws {
        do {
            if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
        } catch {
            throw CouchetteError(.io, message: "Cannot delete \(folder): \(error.localizedDescription)")
        }
    }

    /// Whether a database exists.
    public static func exists(withName name: String, inDirectory directory: String? = nil) -> Bool {
        guard (try? DatabaseNames.validateDatabaseName(name)) != nil else { return false }
        let file = (folderPath(name: name, directory: directory) as NSString).appendingPathComponent(databaseFileName)
        return FileManager.default.fileExists(atPath: file)
    }

    /// Installs a copy of a database folder (a pre-built database) under a new name. The copy gets new
    /// UUIDs, so replicators do not mistake it for the original.
    ///
    /// - Parameters:
    ///   - path: The source `….couchette` folder.
    ///   - name: The new database's name.
    ///   - config: Where to put it (its `directory`).
    /// - Throws: `.preconditionFailed` (412) when the target exists, `.notFound` when the source is not a
    ///   database folder.
    public static func copy(fromPath path: String, toDatabase name: String, withConfig config: DatabaseConfiguration?)
        throws
    {
        try DatabaseNames.validateDatabaseName(name)
        let config = DatabaseConfiguration(config: config)
        let source = (path as NSString).appendingPathComponent(databaseFileName)
        guard FileManager.default.fileExists(atPath: source) else {
            throw CouchetteError(.notFound, message: "\(path) is not a Couchette database folder")
        }
        let target = folderPath(name: name, directory: config.directory)
        guard !FileManager.default.fileExists(atPath: target) else {
            throw CouchetteError(.preconditionFailed, message: "Database \"\(name)\" already exists")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: config.directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path, toPath: target)
            var options = try config.storageOptions(key: config.resolvedEncryptionKey())
            options.create = false
            options.readOnly = false
            let storage = try DatabaseStorage(
                path: (target as NSString).appendingPathComponent(databaseFileName), options: options)
            defer { storage.close() }
            try storage.setMetaValue("public_uuid", UUID().uuidString.lowercased())
            try storage.setMetaValue("private_uuid", UUID().uuidString.lowercased())
        } catch {
            try? FileManager.default.removeItem(atPath: target)
            throw DatabaseStorage.translate(error)
        }
    }

    /// The names of the databases in a folder.
    public static func allDatabaseNames(inDirectory directory: String? = nil) -> [String] {
        let directory = directory ?? DatabaseConfiguration.defaultDirectory
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let suffix = ".\(DatabaseNames.folderExtension)"
        return entries.filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }
            .filter { exists(withName: $0, inDirectory: directory) }.sorted()
    }
}
