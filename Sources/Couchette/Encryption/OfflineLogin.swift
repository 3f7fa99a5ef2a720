import Foundation

// MARK: - OfflineLogin

/// One encrypted database per user, unlocked by the login password, so login works offline (the tutorial's
/// "Offline Login"): the database is named after the user and encrypted with a data key that the password unwraps
/// (``KeyStoreProvider``). A wrong password throws 401.
///
/// ```swift
/// let login = OfflineLogin(directory: appFolder)
/// do {
///     db = try login.openDatabase(username: "user1", password: typed)
/// } catch let error as CouchetteError where error.status == 401 {
///     // The password changed on the gateway: ask for the old one…
///     try login.changePassword(username: "user1", from: oldPassword, to: typed)   // "Migrate"
///     // …or start over without the unsynced changes.
///     try login.resetDatabase(username: "user1")                               // "Delete"
/// }
/// ```
public struct OfflineLogin: Sendable {
    /// Where the users' databases live.
    public let directory: String
    private let keyStore: any KeyStore

    /// Users' databases in `directory` (``DatabaseConfiguration/defaultDirectory`` when nil), their keys in
    /// `keyStore`.
    public init(directory: String? = nil, keyStore: any KeyStore = FileKeyStore.default) {
        self.directory = directory ?? DatabaseConfiguration.defaultDirectory
        self.keyStore = keyStore
    }

    /// Opens (creating on the first login) the database of `username`.
    ///
    /// - Throws: `.wrongEncryptionKey` (401) when `password` is not the user's.
    public func openDatabase(
        username: String, password: String, config: DatabaseConfiguration = DatabaseConfiguration()
    ) throws -> Database {
        var config = config
        config.directory = directory
        config.encryptionKey = nil
        config.encryptionKeyProvider = provider(username, password)
        if !hasDatabase(username: username), try keyStore.load(identifier: username) != nil {
            // A key without its database (a reset interrupted): the new database gets a new key.
            try keyStore.delete(identifier: username)
        }
        return try Database(name: username, config: config)
    }

    /// Makes `new` the password of `username`'s database ("Migrate" in the tutorial): only its key is re-wrapped.
    ///
    /// - Throws: `.wrongEncryptionKey` (401) when `old` is not the current password; `.notFound` without a database.
    public func changePassword(username: String, from old: String, to new: String) throws {
        try provider(username, old).changePassword(from: old, to: new)
    }

    /// Deletes the database of `username` and its key ("Delete" in the tutorial): the next login starts empty.
    public func resetDatabase(username: String) throws {
        if hasDatabase(username: username) { try Database.delete(withName: username, inDirectory: directory) }
        try keyStore.delete(identifier: username)
    }

    /// Whether `username` has a database here.
    public func hasDatabase(username: String) -> Bool {
        Database.exists(withName: username, inDirectory: directory)
    }

    private func provider(_ username: String, _ password: String) -> KeyStoreProvider {
        KeyStoreProvider(password: password, identifier: username, store: keyStore)
    }
}
