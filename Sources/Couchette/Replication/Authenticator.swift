import Foundation

// MARK: - Authenticators

/// How a replicator proves who it is to a remote database.
public protocol Authenticator: Sendable {
    /// The headers to send with every request.
    var headers: [String: String] { get }
}

/// HTTP Basic authentication with a user's name and password.
public struct BasicAuthenticator: Authenticator {
    /// The user name.
    public let username: String
    private let password: String

    /// Authenticates as `username`.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public var headers: [String: String] {
        ["Authorization": "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()]
    }
}

/// A session made on the gateway (`POST /{db}/_session`), sent as its cookie.
public struct SessionAuthenticator: Authenticator {
    /// The session ID.
    public let sessionID: String
    /// The cookie's name.
    public let cookieName: String

    /// Authenticates with the session `sessionID`.
    public init(sessionID: String, cookieName: String = "SyncGatewaySession") {
        self.sessionID = sessionID
        self.cookieName = cookieName
    }

    public var headers: [String: String] { ["Cookie": "\(cookieName)=\(sessionID)"] }
}

/// Credentials carried by headers of the app's choosing: a bearer token, an API key, a proxy's header.
///
/// ```swift
/// config.authenticator = HeaderAuthenticator(headers: ["Authorization": "Bearer \(token)"])
/// ```
public struct HeaderAuthenticator: Authenticator {
    public let headers: [String: String]

    /// Authenticates with `headers`, sent with every request (they win over `ReplicatorConfiguration.headers`).
    public init(headers: [String: String]) {
        self.headers = headers
    }
}
