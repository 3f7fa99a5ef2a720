import Foundation

// MARK: - BasicCredentials

/// A user name and password from an `Authorization: Basic …` header.
///
/// ```swift
/// BasicCredentials(authorization: "Basic dXNlcjE6cGE6c3M=")   // user1 / "pa:ss"
/// BasicCredentials(authorization: "Bearer abc")                // nil
/// ```
///
/// The password is never shown by `description` or `dump`.
public struct BasicCredentials: Sendable, Equatable {
    /// The user name: the text before the first `:`.
    public var username: String

    /// The password: everything after the first `:` (it may contain `:`).
    public var password: String

    /// Creates credentials directly.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Parses an `Authorization` header value: scheme `Basic` (any case), then base64 of UTF-8 `user:password`.
    ///
    /// Returns `nil` for another scheme, bad base64, non-UTF-8 text, a missing `:` or an empty user name, so that
    /// the request falls through to cookie or GUEST authentication as in Sync Gateway.
    public init?(authorization header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " "),
            trimmed[..<space].lowercased() == "basic"
        else { return nil }
        let encoded = trimmed[space...].trimmingCharacters(in: .whitespaces)
        guard !encoded.isEmpty, let data = Data(base64Encoded: encoded),
            let text = String(bytes: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        let username = String(text[..<colon])
        guard !username.isEmpty else { return nil }
        self.init(username: username, password: String(text[text.index(after: colon)...]))
    }
}

// MARK: - Redacted descriptions

extension BasicCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `BasicCredentials(username: "user1", password: <redacted>)`.
    public var description: String {
        "BasicCredentials(username: \"\(username)\", password: <redacted>)"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the password.
    public var customMirror: Mirror {
        Mirror(self, children: ["username": username, "password": "<redacted>"], displayStyle: .struct)
    }
}
