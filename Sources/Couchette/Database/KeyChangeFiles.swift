import Foundation

/// The files of a key change in a database folder, and the steps that make it crash safe (docs/decisions.md,
/// "Changing the key"):
///
/// 1. copies are written beside the live files: `db.sqlite3.rekey` (under the new key) and `Attachments.rekey/`
///    (every blob re-encrypted), each synced;
/// 2. **commit**: the marker file `rekey.commit` is created and synced — before it, the old files are the database;
///    after it, the copies are;
/// 3. the copies are renamed over the live files (the old blob folder goes to `Attachments.old/` and is deleted),
///    then the marker is removed.
///
/// Opening a database first calls ``recover()``: with a marker it finishes step 3 (no key needed, only renames); without
/// one it deletes the copies of a change that did not commit. Either way exactly one key opens the database.
struct KeyChangeFiles {
    let folder: String

    var database: String { path(Database.databaseFileName) }
    var databaseCopy: String { database + ".rekey" }
    var attachments: String { path(Database.attachmentsFolderName) }
    var attachmentsCopy: String { attachments + ".rekey" }
    var attachmentsOld: String { attachments + ".old" }
    var marker: String { path("rekey.commit") }

    /// Finishes a committed change or removes the leftovers of one that was not.
    func recover() throws {
        if FileManager.default.fileExists(atPath: marker) {
            try finish()
        } else {
            removeCopies()
        }
    }

    /// Deletes the copies of an uncommitted change, and an old blob folder whose deletion was interrupted.
    func removeCopies() {
        for item in [databaseCopy, attachmentsCopy, attachmentsOld] { try? FileManager.default.removeItem(atPath: item) }
    }

    /// The commit point: creates and syncs the marker. The copies must already be synced.
    func commit() throws {
        guard FileManager.default.createFile(atPath: marker, contents: Data("couchette key change\n".utf8)) else {
            throw CouchetteError(.io, message: "Cannot create the key change marker in \(folder)")
        }
        try FileIO.synchronizeFile(marker)
        FileIO.synchronizeDirectory(folder)
    }

    /// Moves the copies over the live files and removes the marker. Idempotent: run again after a crash at any point
    /// it ends in the same state.
    func finish() throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: databaseCopy) {
            // The WAL and shared memory of the old file must never be paired with the new one.
            for suffix in ["-wal", "-shm", "-journal"] { try FileIO.removeFile(database + suffix) }
            try FileIO.renameFile(databaseCopy, to: database)
            Self.reached("database-moved")
        }
        if manager.fileExists(atPath: attachmentsCopy) {
            if manager.fileExists(atPath: attachments) {
                if manager.fileExists(atPath: attachmentsOld) { try manager.removeItem(atPath: attachmentsOld) }
                try FileIO.renameFile(attachments, to: attachmentsOld)
            }
            Self.reached("blobs-moved-aside")
            try FileIO.renameFile(attachmentsCopy, to: attachments)
            Self.reached("blobs-moved")
        }
        FileIO.synchronizeDirectory(folder)
        try FileIO.removeFile(marker)
        FileIO.synchronizeDirectory(folder)
        try? manager.removeItem(atPath: attachmentsOld)
    }

    // MARK: - Crash tests

    /// Called with the name of each step a key change completes (`database-copied`, `blobs-copied`, `closed`,
    /// `committed`, `database-moved`, `blobs-moved-aside`, `blobs-moved`): crash tests end the process there. Set it
    /// before opening any database.
    nonisolated(unsafe) static var stepObserver: (@Sendable (String) -> Void)?

    static func reached(_ step: String) {
        stepObserver?(step)
    }

    private func path(_ name: String) -> String {
        (folder as NSString).appendingPathComponent(name)
    }
}
