// MARK: - PrincipalName

/// Rules for user, role and channel names (spec: gateway-rest-api.md §14, sync-function.md §6).
///
/// ```swift
/// PrincipalName.isValid("user1@example.com")   // true
/// PrincipalName.isValid("role:moderator")      // false: ":" is reserved for the "role:" prefix
/// PrincipalName.isValidChannel("a,b")          // false
/// ```
public enum PrincipalName {
    /// The name of the anonymous user.
    public static let guest = "GUEST"

    /// The public channel every user (and an enabled GUEST) implicitly holds.
    public static let publicChannel = "!"

    /// The wildcard channel: holding it grants read access to everything.
    public static let allChannels = "*"

    /// Whether `name` matches Sync Gateway's `^[-+.@%\w]*$`, with `\w` the ASCII letters, digits and `_`.
    public static func isValid(_ name: String) -> Bool {
        // Every allowed character is ASCII, so the UTF-8 bytes can be checked one by one.
        name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "%"):
                true
            default: false
            }
        }
    }

    /// Whether `name` is a valid channel name: non-empty and without a comma (SG ≥ 1.3).
    public static func isValidChannel(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.contains(UInt8(ascii: ","))
    }

    /// A channel set as a principal holds it: when it contains `*`, just `{"*"}` (sync-function.md §6).
    static func collapsingWildcard(_ channels: Set<String>) -> Set<String> {
        channels.contains(allChannels) ? [allChannels] : channels
    }
}
