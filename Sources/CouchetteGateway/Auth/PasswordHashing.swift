// MARK: - PasswordHashing

/// A way to hash passwords and check them against stored hashes.
///
/// ``PasswordHasher`` (bcrypt) is the implementation; the protocol exists so that ``Authenticator`` and
/// ``PrincipalConfigLoader`` can be tested with a counting double.
public protocol PasswordHashing: Sendable {
    /// Hashes a password with a fresh random salt.
    ///
    /// - Parameters:
    ///   - password: The plain-text password.
    ///   - allowEmpty: Whether the empty password is acceptable (the `allow_empty_password` setting).
    /// - Returns: A self-describing hash such as `$2b$10$…`, safe to store.
    /// - Throws: ``GatewayError`` 400 for a refused password, 500 when hashing fails.
    func hash(_ password: String, allowEmpty: Bool) throws(GatewayError) -> String

    /// Whether `password` matches `hash`; malformed hashes never match.
    func verify(_ password: String, against hash: String) -> Bool
}

extension PasswordHashing {
    /// Hashes a non-empty password; the empty password is refused.
    public func hash(_ password: String) throws(GatewayError) -> String {
        try hash(password, allowEmpty: false)
    }
}
