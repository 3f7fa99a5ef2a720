import Crypto
import CryptoExtras
import Foundation

// MARK: - WrappedKey

/// A database's data key encrypted under a key derived from a password, as a ``KeyStore`` keeps it: AES-256-GCM
/// (`encryptedKey` is the ciphertext followed by the 16-byte tag) under PBKDF2-HMAC-SHA256 of the password with
/// `salt` and `iterations`.
public struct WrappedKey: Codable, Sendable, Hashable {
    public let encryptedKey: Data
    public let salt: Data
    public let iv: Data
    public let iterations: Int
    public let version: String

    /// The format written by this version.
    static let currentVersion = "1"

    /// Wraps `dataKey` under `password` with a fresh salt and nonce.
    init(wrapping dataKey: Data, password: String, iterations: Int) throws(CouchetteError) {
        let salt = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        let nonce = AES.GCM.Nonce()
        do {
            let sealed = try AES.GCM.seal(
                dataKey, using: Self.wrappingKey(password, salt: salt, iterations: iterations), nonce: nonce)
            self.init(
                encryptedKey: sealed.ciphertext + sealed.tag, salt: salt, iv: Data(nonce), iterations: iterations,
                version: Self.currentVersion)
        } catch let error as CouchetteError {
            throw error
        } catch {
            throw CouchetteError(.io, message: "Cannot wrap the data key: \(error)")
        }
    }

    init(encryptedKey: Data, salt: Data, iv: Data, iterations: Int, version: String) {
        self.encryptedKey = encryptedKey
        self.salt = salt
        self.iv = iv
        self.iterations = iterations
        self.version = version
    }

    /// The data key.
    ///
    /// - Throws: `.wrongEncryptionKey` (401) for a wrong password; `.corrupt` for a malformed record.
    func unwrap(password: String) throws(CouchetteError) -> Data {
        guard version == Self.currentVersion, encryptedKey.count > 16, iterations > 0 else {
            throw CouchetteError(.corrupt, message: "The wrapped key is malformed or of an unknown version")
        }
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: iv), ciphertext: encryptedKey.dropLast(16), tag: encryptedKey.suffix(16))
        } catch {
            throw CouchetteError(.corrupt, message: "The wrapped key is malformed")
        }
        do {
            return try AES.GCM.open(sealed, using: Self.wrappingKey(password, salt: salt, iterations: iterations))
        } catch {
            throw CouchetteError(.wrongEncryptionKey, message: "The password does not unlock the key")
        }
    }

    /// PBKDF2-HMAC-SHA256 of the password.
    private static func wrappingKey(_ password: String, salt: Data, iterations: Int) throws -> SymmetricKey {
        try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32,
            unsafeUncheckedRounds: iterations)
    }
}
