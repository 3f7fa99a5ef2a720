import Crypto
import Foundation

// MARK: - KeyStoreProvider

/// A random 256-bit data key, kept in a ``KeyStore`` wrapped under a key derived from a password (Cloudant Sync's
/// design): the database is encrypted with the data key, so changing the password re-wraps 32 bytes and never
/// re-encrypts the database.
///
/// ```swift
/// let provider = KeyStoreProvider(password: typed, identifier: "alice")
/// var config = DatabaseConfiguration()
/// config.encryptionKeyProvider = provider
/// let db = try Database(name: "alice", config: config)     // the first open makes the key
/// try provider.changePassword(from: typed, to: newPassword) // fast: only the key is re-wrapped
/// ```
public struct KeyStoreProvider: EncryptionKeyProvider {
    private let password: String
    /// Names the key in the store.
    public let identifier: String
    private let store: any KeyStore
    private let iterations: Int

    /// A provider for the key `identifier` in `store`, unlocked by `password`.
    ///
    /// - Parameter iterations: PBKDF2 rounds for a new wrapping (existing keys keep theirs).
    public init(password: String, identifier: String, store: any KeyStore = FileKeyStore.default, iterations: Int = 100_000) {
        self.password = password
        self.identifier = identifier
        self.store = store
        self.iterations = iterations
    }

    /// The data key: unwrapped from the store, or made and saved on first use.
    ///
    /// - Throws: `.wrongEncryptionKey` (401) when the password does not unlock the stored key.
    public func encryptionKey() throws -> EncryptionKey? {
        if let wrapped = try store.load(identifier: identifier) {
            return .key(try wrapped.unwrap(password: password))
        }
        let dataKey = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        try store.save(try WrappedKey(wrapping: dataKey, password: password, iterations: iterations), identifier: identifier)
        return .key(dataKey)
    }

    /// Re-wraps the stored key under `new`.
    ///
    /// - Throws: `.wrongEncryptionKey` (401) when `old` does not unlock it; `.notFound` when there is no key.
    public func changePassword(from old: String, to new: String) throws {
        guard let wrapped = try store.load(identifier: identifier) else {
            throw CouchetteError(.notFound, message: "There is no key \"\(identifier)\"")
        }
        let dataKey = try wrapped.unwrap(password: old)
        try store.save(try WrappedKey(wrapping: dataKey, password: new, iterations: wrapped.iterations), identifier: identifier)
    }

    /// Whether the store holds the key.
    public func exists() throws -> Bool { try store.load(identifier: identifier) != nil }

    /// Deletes the key: databases encrypted with it can no longer be opened.
    public func delete() throws { try store.delete(identifier: identifier) }
}
