import CouchetteCore
import Foundation

// MARK: - Session

/// A login session: a random ID that the client presents in the `SyncGatewaySession` cookie.
///
/// ```swift
/// let session = Session(username: "user1", ttl: Session.defaultTTL, now: Date())
/// session.id            // 40 lower-case hex characters from the system CSPRNG
/// ```
///
/// The ID is a bearer secret: `description` and `dump` never show it.
public struct Session: Sendable, Equatable, Codable {
    // MARK: - Constants

    /// The cookie carrying the session ID.
    public static let cookieName = "SyncGatewaySession"

    /// Sync Gateway's default session lifetime: 24 hours.
    public static let defaultTTL: TimeInterval = 24 * 60 * 60

    /// The length of a session ID in hex characters (20 random bytes).
    public static let idLength = 40

    // MARK: - Properties

    /// The session ID: 40 lower-case hex characters.
    public var id: String

    /// The user the session authenticates.
    public var username: String

    /// When the session stops being valid.
    public var expires: Date

    /// The lifetime, in seconds, that each refresh extends the session by.
    public var ttl: TimeInterval

    // MARK: - Initialisers

    /// Creates a session with every field given.
    public init(id: String, username: String, expires: Date, ttl: TimeInterval) {
        self.id = id
        self.username = username
        self.expires = expires
        self.ttl = ttl
    }

    /// Creates a session with a fresh random ID, expiring `ttl` seconds after `now`.
    public init(username: String, ttl: TimeInterval = Session.defaultTTL, now: Date) {
        self.init(id: Self.makeID(), username: username, expires: now.addingTimeInterval(ttl), ttl: ttl)
    }

    // MARK: - IDs

    /// A new session ID: 20 bytes from `SystemRandomNumberGenerator` (a CSPRNG), as 40 lower-case hex characters.
    public static func makeID() -> String { RandomHex.make(bytes: idLength / 2) }

    /// Whether `id` has the shape of a session ID: 40 hex characters.
    public static func isWellFormedID(_ id: String) -> Bool {
        id.utf8.count == idLength && id.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }

    // MARK: - Expiry

    /// Whether the session has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        now >= expires
    }

    /// Whether more than 10 % of the TTL has elapsed at `now`, so that a request should slide the expiry forward
    /// (spec: gateway-rest-api.md §13).
    public func needsRefresh(at now: Date) -> Bool {
        expires.timeIntervalSince(now) < ttl * 0.9
    }
}

// MARK: - Redacted descriptions

extension Session: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Session(user: "user1", expires: …, ttl: 86400)`: the ID is not shown.
    public var description: String {
        "Session(user: \"\(username)\", expires: \(expires), ttl: \(ttl), id: <redacted>)"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the ID.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["id": "<redacted>", "username": username, "expires": expires, "ttl": ttl],
            displayStyle: .struct
        )
    }
}
