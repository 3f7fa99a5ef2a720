// MARK: - PasswordRule

/// The one rule a user's password meets, whether it comes from the configuration file or the admin API (as Sync
/// Gateway applies one rule to both): at least ``minimumLength`` characters, or empty where the database's
/// `allow_empty_password` allows it.
enum PasswordRule {
    /// The fewest characters a non-empty password has.
    static let minimumLength = 3

    /// Checks `password`.
    ///
    /// - Throws: 400 `Empty passwords are not allowed ` for an empty one when not allowed; 400 `Passwords must be at
    ///   least three 3 characters` (Sync Gateway's words) for a shorter one.
    static func check(_ password: String, allowEmpty: Bool) throws(GatewayError) {
        if password.isEmpty {
            guard allowEmpty else { throw .badRequest("Empty passwords are not allowed ") }
        } else if password.count < minimumLength {
            throw .badRequest("Passwords must be at least three 3 characters")
        }
    }
}
