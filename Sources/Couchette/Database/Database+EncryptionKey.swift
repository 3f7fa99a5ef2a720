import CouchetteSQLite
import Foundation

// MARK: - Changing the encryption key

extension Database {
    /// Encrypts the database with `newKey`: encrypts a plain database, re-keys an encrypted one, or with nil
    /// decrypts it, blobs included (their files are encrypted with a key derived from the database's).
    ///
    /// Crash safe: copies of the database file (`VACUUM INTO`) and of every blob are written beside the live files,
    /// synced and checked, then a marker file commits the change and the copies are renamed over the originals
    /// (``KeyChangeFiles``); killed at any point, the database opens afterwards with exactly one of the old or new
    /// key, and nothing is lost. Needs room for a second copy of the database and its blobs while it runs.
    ///
    /// ```swift
    /// try db.changeEncryptionKey(.password(newPassword))   // the tutorial's "Migrate"
    /// ```
    ///
    /// - Throws: `.badInput` for a bad key; `.busy` inside a transaction or while another connection holds the
    ///   database open; `.corrupt` when a blob does not verify (nothing changes then); `.notOpen` once closed.
    public func changeEncryptionKey(_ newKey: EncryptionKey?) throws {
        let key = try newKey?.connectionKey()
        // The read connections close first (the files are swapped under them) and open again with the new key.
        if lock.withLock({ transactionDepth == 0 }) {
            suspendReaders()
        }
        defer { resumeReaders() }
        try lock.withLock { () throws -> Void in
            guard let storage, let folder = folderPath, let blobStore else {
                throw CouchetteError(.notOpen, message: "Database \"\(name)\" is closed")
            }
            guard transactionDepth == 0 else {
                throw CouchetteError(.busy, message: "Cannot change the key inside a transaction")
            }
            let files = KeyChangeFiles(folder: folder)
            files.removeCopies()
            let newCipher: BlobCipher?
            var copiedBlobs: BlobStore?
            do {
                try storage.copy(to: files.databaseCopy, key: key)
                try FileIO.synchronizeFile(files.databaseCopy)
                newCipher = Database.blobCipher(pageKey: try DatabaseStorage.check(path: files.databaseCopy, key: key))
                KeyChangeFiles.reached("database-copied")
                if blobStore.cipher != nil || newCipher != nil {
                    let copies = try BlobStore(directory: URL(fileURLWithPath: files.attachmentsCopy), cipher: newCipher)
                    try Database.copyMissingBlobs(from: blobStore, to: copies)
                    copiedBlobs = copies
                }
                KeyChangeFiles.reached("blobs-copied")
            } catch {
                files.removeCopies()
                throw DatabaseStorage.translate(error)
            }
            storage.close()
            self.storage = nil
            // A WAL left by another connection would be replayed onto the new file: keep the old one then.
            if let size = try? FileManager.default.attributesOfItem(atPath: files.database + "-wal")[.size] as? Int,
                size > 0
            {
                files.removeCopies()
                self.storage = try DatabaseStorage(path: files.database, options: reopening(with: currentKey))
                throw CouchetteError(.busy, message: "Another connection has the database open")
            }
            try blobStore.gate.exclusive { () throws -> Void in
                // Blobs stored while the copies were written; from here until the swap no blob is written or read.
                do {
                    if let copiedBlobs { try Database.copyMissingBlobs(from: blobStore, to: copiedBlobs) }
                    FileIO.synchronizeDirectory(folder)
                    KeyChangeFiles.reached("closed")
                    try files.commit()
                    KeyChangeFiles.reached("committed")
                } catch {
                    files.removeCopies()
                    _ = try? FileIO.removeFile(files.marker)
                    self.storage = try DatabaseStorage(path: files.database, options: reopening(with: currentKey))
                    throw DatabaseStorage.translate(error)
                }
                do {
                    try files.finish()
                } catch {
                    throw CouchetteError(
                        .io, message: "The key change is committed but its files could not be moved into place (\(error));"
                            + " opening the database again with the new key finishes it")
                }
                blobStore.cipher = newCipher
            }
            currentKey = newKey
            self.storage = try DatabaseStorage(path: files.database, options: reopening(with: newKey))
        }
    }

    /// Calls `observer` with each step a schema migration completes (`copied`, `migrated`), inside its
    /// transaction, so that a crash test can end the process there. Not for apps.
    @_spi(CrashTesting) public static func observeMigrationSteps(_ observer: (@Sendable (String) -> Void)?) {
        Schema.observeMigrationSteps(observer)
    }

    /// Calls `observer` with the name of each step a key change completes (see ``KeyChangeFiles``), so that a crash
    /// test can end the process there. Not for apps.
    @_spi(CrashTesting) public static func observeKeyChangeSteps(_ observer: (@Sendable (String) -> Void)?) {
        KeyChangeFiles.stepObserver = observer
    }

    /// Copies into `target` every blob of `source` it does not hold yet (each synced; then the folder), checking each
    /// against its digest. Called with `source`'s gate held, or before it matters.
    private static func copyMissingBlobs(from source: BlobStore, to target: BlobStore) throws {
        for digest in try source.allDigests() where target.ungatedLength(of: digest) == nil {
            try target.write(contentOf: digest, from: source.ungatedReader(for: digest))
        }
        FileIO.synchronizeDirectory(target.directory.path)
    }

    /// The cipher of the blobs of a database whose page key is `pageKey`.
    static func blobCipher(pageKey: [UInt8]?) -> BlobCipher? {
        pageKey.map { BlobCipher(databaseKey: Data($0)) }
    }

    /// The configuration to reopen with after a key change.
    private func reopening(with key: EncryptionKey?) throws -> StorageOptions {
        var reopened = try config.storageOptions(key: key)
        reopened.create = false
        return reopened
    }
}
