import CouchetteCore

// MARK: - ListenerPasswordAuthenticator

/// Lets a ``URLEndpointListener`` client in by the user name and password of its HTTP Basic credentials
/// (Couchbase Lite's `ListenerPasswordAuthenticator`). A request without them, or with ones the closure refuses,
/// gets 401 with a `WWW-Authenticate: Basic` challenge.
///
/// Compare secrets in constant time (``ListenerPasswordAuthenticator/init(user:password:)`` does).
public struct ListenerPasswordAuthenticator: Sendable {
    /// Whether the user name and password are accepted.
    public let authenticate: @Sendable (_ username: String, _ password: String) -> Bool

    /// Accepts the credentials `authenticate` returns true for.
    public init(authenticate: @escaping @Sendable (_ username: String, _ password: String) -> Bool) {
        self.authenticate = authenticate
    }

    /// Accepts one user name and password, compared in constant time.
    public init(user: String, password: String) {
        self.authenticate = { username, candidate in
            // Both compared whatever the first gives, so the time tells nothing of which was wrong.
            let nameMatches = ConstantTime.equals(username, user)
            let passwordMatches = ConstantTime.equals(candidate, password)
            return nameMatches && passwordMatches
        }
    }
}
