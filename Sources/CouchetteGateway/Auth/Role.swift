import CouchetteCore

// MARK: - Role

/// A named set of channels that users join through `admin_roles` or the sync function's `role()`.
///
/// In Sync Gateway 1.x a role has only `admin_channels` (roles cannot be granted roles); the sync function's
/// `access("role:<name>", …)` adds channels kept in ``channelsFromGrants``.
///
/// ```swift
/// let moderator = Role(name: "moderator", adminChannels: ["moderators"])
/// moderator.jsonValue.serializedString()
/// // {"admin_channels":["moderators"],"all_channels":["moderators"],"name":"moderator"}
/// ```
///
/// `Codable` encodes the stored form (for ``PrincipalStore`` implementations), not the REST API form.
public struct Role: Sendable, Equatable, Codable, CustomStringConvertible {
    // MARK: - Properties

    /// The role name.
    public var name: String

    /// Channels granted by the administrator (`admin_channels`).
    public var adminChannels: Set<String>

    /// Channels granted to `role:<name>` by documents through the sync function's `access()`.
    public var channelsFromGrants: Set<String>

    /// The database sequence of the role's last change, assigned by the database layer (0 = unassigned).
    public var sequence: UInt64

    // MARK: - Initialiser

    /// Creates a role.
    public init(
        name: String,
        adminChannels: Set<String> = [],
        channelsFromGrants: Set<String> = [],
        sequence: UInt64 = 0
    ) {
        self.name = name
        self.adminChannels = adminChannels
        self.channelsFromGrants = channelsFromGrants
        self.sequence = sequence
    }

    // MARK: - Channels

    /// `admin_channels ∪ channelsFromGrants`, collapsed to `{"*"}` when it contains `*`.
    public var allChannels: Set<String> {
        PrincipalName.collapsingWildcard(adminChannels.union(channelsFromGrants))
    }

    // MARK: - JSON

    /// The admin API's `GET /{db}/_role/{name}` body: `{"name", "admin_channels", "all_channels"}`, arrays sorted.
    public var jsonValue: JSONValue {
        .object([
            "name": .string(name),
            "admin_channels": .sortedStrings(adminChannels),
            "all_channels": .sortedStrings(allChannels),
        ])
    }

    // MARK: - Description

    /// `Role(name: "moderator", admin_channels: [...])`.
    public var description: String {
        "Role(name: \"\(name)\", admin_channels: \(adminChannels.sorted()))"
    }
}

// MARK: - JSONValue helper

extension JSONValue {
    /// A JSON array of the strings, sorted, for deterministic output.
    static func sortedStrings(_ strings: some Sequence<String>) -> JSONValue {
        .array(strings.sorted().map { .string($0) })
    }
}
