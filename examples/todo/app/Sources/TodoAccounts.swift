import Couchette
import Foundation

/// Where the users' databases live and how they open: one database per user, named after the user ("Create a
/// Database"); with encryption the login password is the key, so login works offline and a wrong password is a
/// 401 (seed 000, "Offline Login"); the pre-built Groceries database is installed by copy on first launch.
struct TodoAccounts: Sendable {
    let directory: String
    let encryption: Bool
    /// The pre-built database folder to install for a user who has no database yet (nil: start empty).
    let prebuilt: String?

    private var config: DatabaseConfiguration {
        var config = DatabaseConfiguration()
        config.directory = directory
        return config
    }

    /// Whether `username` has a database on this device.
    func exists(_ username: String) -> Bool {
        Database.exists(withName: username, inDirectory: directory)
    }

    /// Opens the database of `username`, creating it (from the pre-built one when configured) on first use.
    ///
    /// - Throws: ``TodoError/wrongPassword`` when encryption is on and `password` is not the database's key.
    func open(_ username: String, password: String?) throws -> Database {
        if !exists(username), let prebuilt { try install(prebuilt, for: username, password: password) }
        var config = config
        if encryption, let password { config.encryptionKey = .password(password) }
        do {
            return try Database(name: username, config: config)
        } catch let error as CouchetteError where error.code == .wrongEncryptionKey {
            throw TodoError.wrongPassword
        }
    }

    /// "Migrate" (seed 000): opens the database with the old password and makes the new one its key.
    func migrate(_ username: String, from oldPassword: String, to newPassword: String) throws -> Database {
        let database = try open(username, password: oldPassword)
        if encryption { try database.changeEncryptionKey(.password(newPassword)) }
        return database
    }

    /// "Delete" (seed 000): the local database goes, with the changes it had not pushed.
    func delete(_ username: String) throws {
        if exists(username) { try Database.delete(withName: username, inDirectory: directory) }
    }

    /// "Pre-built database": copies the bundled database as the user's; with encryption, encrypts the copy with the
    /// user's password.
    private func install(_ prebuilt: String, for username: String, password: String?) throws {
        try Database.copy(fromPath: prebuilt, toDatabase: username, withConfig: config)
        if encryption, let password {
            let copy = try Database(name: username, config: config)
            defer { try? copy.close() }
            try copy.changeEncryptionKey(.password(password))
        }
    }

    /// The pre-built database shipped with the app.
    static var bundledPrebuilt: String? {
        Bundle.module.url(forResource: "todo", withExtension: "couchette")?.path
    }
}
