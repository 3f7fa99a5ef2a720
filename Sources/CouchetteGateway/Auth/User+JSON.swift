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

// MARK: - Session context

extension User {
    /// The `userCtx` of `GET`/`POST /{db}/_session` (spec: gateway-rest-api.md §13): the name (`null` for
    /// `GUEST`) and the user's own channels, each with the sequence it was granted at; `"!"` at 1, the others at
    /// the user's last change (its `admin_channels` and document grants, not its roles' channels).
    ///
    /// ```json
    /// {"name":"user1","channels":{"!":1,"user1":4}}
    /// ```
    public var userContext: JSONValue {
        let grantSequence = JSONValue.int(Int64(max(sequence, 1)))
        var channels: [String: JSONValue] = [:]
        for channel in PrincipalName.collapsingWildcard(adminChannels.union(channelsFromGrants)) {
            channels[channel] = grantSequence
        }
        channels[PrincipalName.publicChannel] = 1
        return .object(["name": isGuest ? .null : .string(name), "channels": .object(channels)])
    }

    /// The `userCtx` of a caller that is no user at all (GUEST disabled, or the admin port).
    public static var anonymousContext: JSONValue {
        .object(["name": .null, "channels": .object([:])])
    }
}
