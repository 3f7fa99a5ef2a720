import CouchetteSQLite
import Foundation

// MARK: - Changing the encryption key

extension Database {
    /// Encrypts the database with `newKey`: encrypts a plain database, re-keys an encrypted one, or with nil
    /// decrypts it. Blobs are not encrypted (yet), so they stay as they are.
    ///
    /// Crash safe: a copy is written beside the file (`VACUUM INTO`), synced, checked with the new key, and renamed
    /// over the database once this connection has closed it; killed at any point, the database opens afterwards with
    /// exactly one of the old or new key, and nothing is lost.
    ///
    /// ```swift
    /// try db.changeEncryptionKey(.password(newPassword))   // the tutorial's "Migrate"
    /// ```
    ///
    /// - Throws: `.badInput` for a bad key; `.busy` inside a transaction or while another connection holds the
    ///   database open; `.notOpen` once closed.
    public func changeEncryptionKey(_ newKey: EncryptionKey?) throws {
        let key = try newKey?.connectionKey()
        try lock.withLock { () throws -> Void in
            guard let storage, let folder = folderPath else {
                throw CouchetteError(.notOpen, message: "Database \"\(name)\" is closed")
            }
            guard transactionDepth == 0 else {
                throw CouchetteError(.busy, message: "Cannot change the key inside a transaction")
            }
            let path = (folder as NSString).appendingPathComponent(Database.databaseFileName)
            let copy = path + Database.rekeySuffix
            try? FileManager.default.removeItem(atPath: copy)
            do {
                try storage.connection.vacuum(into: copy, encryptionKey: key)
                try FileIO.synchronizeFile(copy)
                try DatabaseStorage.check(path: copy, key: key)
            } catch {
                try? FileManager.default.removeItem(atPath: copy)
                throw DatabaseStorage.translate(error)
            }
            storage.close()
            self.storage = nil
            // A WAL left by another connection would be replayed onto the new file: keep the old one then.
            if let size = try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int, size > 0 {
                try? FileManager.default.removeItem(atPath: copy)
                self.storage = try DatabaseStorage(path: path, config: reopening(with: currentKey))
                throw CouchetteError(.busy, message: "Another connection has the database open")
            }
            try FileIO.renameFile(copy, to: path)
            FileIO.synchronizeDirectory(folder)
            try? FileManager.default.removeItem(atPath: path + "-shm")
            currentKey = newKey
            self.storage = try DatabaseStorage(path: path, config: reopening(with: newKey))
        }
    }

    /// The suffix of the copy a key change writes beside the database file (removed when a change did not finish).
    static let rekeySuffix = ".rekey"

    /// The configuration to reopen with after a key change.
    private func reopening(with key: EncryptionKey?) -> DatabaseConfiguration {
        var reopened = config
        reopened.encryptionKey = key
        reopened.encryptionKeyProvider = nil
        reopened.create = false
        return reopened
    }
}
