import CouchetteCore

// MARK: - RoleUpdate

/// The body of the admin API's `PUT /{db}/_role/{name}` or `POST /{db}/_role/`, parsed and validated.
///
/// `admin_channels` replaces the stored list (omitted means cleared); `all_channels` and unknown keys are ignored.
public struct RoleUpdate: Sendable, Equatable {
    /// The role name.
    public var name: String

    /// The new `admin_channels`.
    public var adminChannels: Set<String>

    /// Creates an update directly.
    public init(name: String, adminChannels: Set<String> = []) {
        self.name = name
        self.adminChannels = adminChannels
    }

    /// Parses a request body; `urlName` is `nil` for `POST` (the body must then carry `name`).
    ///
    /// - Throws: 400 naming the field for a wrong type, `Missing name property`, `Name mismatch (can't change name)`,
    ///   `Invalid name`, `Illegal channel name`.
    public init(parsing body: JSONValue, name urlName: String?) throws(GatewayError) {
        let object = try PrincipalBody.object(body)
        let name = try PrincipalBody.name(object, urlName: urlName)
        self.init(name: name, adminChannels: try PrincipalBody.channels(object, "admin_channels"))
    }

    /// Parses JSON text; 400 "Bad JSON" when it is not JSON.
    public init(parsing bytes: some Collection<UInt8>, name urlName: String?) throws(GatewayError) {
        try self.init(parsing: PrincipalBody.parse(bytes), name: urlName)
    }

    /// The role after this update; document grants and the sequence of `existing` are kept.
    public func applied(to existing: Role?) -> Role {
        var role = existing ?? Role(name: name)
        role.name = name
        role.adminChannels = adminChannels
        return role
    }
}
