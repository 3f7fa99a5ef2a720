import CouchetteSQLite
import Foundation

/// The key of an encrypted database: a password or 32 raw bytes.
///
/// The file is encrypted in SQLCipher 4's default format (AES-256-CBC pages authenticated with HMAC-SHA512), so
/// SQLCipher opens it with the same password (`PRAGMA key = 'password'`) or key (`PRAGMA key = "x'…'"`).
///
/// ```swift
/// var config = DatabaseConfiguration()
/// config.encryptionKey = .password("correct horse battery staple")
/// let db = try Database(name: "secrets", config: config)   // a wrong password throws 401
/// ```
public enum EncryptionKey: Sendable, Hashable {
    /// 32 random bytes used as the AES-256 key (no key derivation: opening is instant).
    case key(Data)
    /// A password, stretched with PBKDF2-HMAC-SHA512 (256,000 rounds) and the file's random salt.
    case password(String)

    /// The key as the storage takes it.
    ///
    /// - Throws: `.badInput` for a raw key that is not 32 bytes or an empty password.
    func connectionKey() throws(CouchetteError) -> Connection.EncryptionKey {
        switch self {
        case .key(let data):
            guard data.count == 32 else {
                throw CouchetteError(.badInput, message: "An encryption key must be 32 bytes, not \(data.count)")
            }
            return .raw(Array(data))
        case .password(let password):
            guard !password.isEmpty else { throw CouchetteError(.badInput, message: "The password is empty") }
            return .passphrase(Array(password.utf8))
        }
    }
}
