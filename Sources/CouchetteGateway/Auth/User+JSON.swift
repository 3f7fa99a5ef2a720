import CouchetteCore

// MARK: - User + JSON

extension User {
    /// The admin API's `GET /{db}/_user/{name}` body (spec: gateway-rest-api.md §14), arrays sorted:
    ///
    /// ```json
    /// {"name":"user1","admin_channels":["user1"],"all_channels":["!","moderators","user1"],
    ///  "admin_roles":["moderator"],"roles":["moderator"],"email":"u@example.com","disabled":true}
    /// ```
    ///
    /// `email` and `disabled` appear only when set / `true`. The password and its hash never appear.
    ///
    /// - Parameter roles: The user's roles, for `all_channels` (see ``allChannels(roles:)``).
    public func jsonValue(roles: [Role]) -> JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name),
            "admin_channels": .sortedStrings(adminChannels),
            "all_channels": .sortedStrings(allChannels(roles: roles)),
            "admin_roles": .sortedStrings(adminRoles),
            "roles": .sortedStrings(roleNames),
        ]
        if let email { object["email"] = .string(email) }
        if disabled { object["disabled"] = .bool(true) }
        return .object(object)
    }
}
