import Foundation

// MARK: - Key providers

/// Supplies the key when a database opens (Cloudant Sync's design); nil means the database is not encrypted.
///
/// ```swift
/// var config = DatabaseConfiguration()
/// config.encryptionKeyProvider = KeyStoreProvider(password: typed, identifier: "alice")
/// let db = try Database(name: "alice", config: config)   // a wrong password throws 401
/// ```
public protocol EncryptionKeyProvider: Sendable {
    /// The key to open the database with.
    func encryptionKey() throws -> EncryptionKey?
}

/// A key the app generates and keeps itself (32 random bytes, e.g. in the platform's keychain).
public struct RawKeyProvider: EncryptionKeyProvider {
    private let key: Data

    /// Provides `key`, which must be 32 bytes.
    public init(key: Data) {
        self.key = key
    }

    public func encryptionKey() throws -> EncryptionKey? { .key(key) }
}
