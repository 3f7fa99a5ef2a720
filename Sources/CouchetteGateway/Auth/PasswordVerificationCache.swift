import CouchetteCore
import Crypto
import Foundation

// MARK: - PasswordVerificationCache

/// Remembers successful password verifications so that repeated Basic-auth requests skip bcrypt.
///
/// Per user it keeps the stored bcrypt hash that was verified and an HMAC-SHA-256 of the password under a random
/// per-process key (so the cache holds nothing an attacker could crack offline). A hit requires the user's current
/// hash to equal the remembered one (a password change invalidates the entry) and the digests to match, compared in
/// constant time.
final class PasswordVerificationCache: @unchecked Sendable {
    // MARK: - State

    /// One remembered verification.
    private struct Entry {
        var passwordHash: String
        var digest: [UInt8]
    }

    /// Guards `entries`.
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private let key = SymmetricKey(size: .bits256)

    /// The number of users remembered before the cache is emptied.
    let capacity: Int

    // MARK: - Initialiser

    /// Creates an empty cache.
    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    // MARK: - Operations

    /// Whether `password` was verified against `passwordHash` for `username` before.
    func contains(username: String, passwordHash: String, password: String) -> Bool {
        let digest = digest(of: password)
        guard let entry = lock.withLock({ entries[username] }) else { return false }
        let sameHash = ConstantTime.equals(entry.passwordHash, passwordHash)
        let samePassword = ConstantTime.equals(entry.digest, digest)
        return sameHash && samePassword
    }

    /// Records a successful verification.
    func insert(username: String, passwordHash: String, password: String) {
        let entry = Entry(passwordHash: passwordHash, digest: digest(of: password))
        lock.withLock {
            if entries.count >= capacity, entries[username] == nil { entries.removeAll(keepingCapacity: true) }
            entries[username] = entry
        }
    }

    /// Forgets the user's entry.
    func remove(username: String) {
        _ = lock.withLock { entries.removeValue(forKey: username) }
    }

    /// The number of remembered users.
    var count: Int {
        lock.withLock { entries.count }
    }

    /// HMAC-SHA-256 of the password's UTF-8 bytes.
    private func digest(of password: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(password.utf8), using: key))
    }
}
