import CouchetteCore

// MARK: - DatabaseConfig + JSON

extension DatabaseConfig {
    // MARK: - Parsing request bodies

    /// Parses a database configuration sent over the admin API (`PUT /{db}/`, `PUT /{db}/_config`): the same
    /// object as an entry of the configuration file's `databases`, back-quoted strings allowed; an empty body is
    /// `{}` (every default).
    ///
    /// ```swift
    /// let config = try DatabaseConfig(name: "newdb", parsing: Array(#"{"server":"walrus:","revs_limit":50}"#.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - name: The database name from the URL; a `name` key in the body is ignored.
    ///   - bytes: The request body.
    /// - Throws: 400 naming the field at fault (e.g. `revs_limit: expected an integer, found a string`), or the
    ///   line and column of malformed JSON.
    public init(name: String, parsing bytes: [UInt8]) throws(GatewayError) {
        let text = String(decoding: bytes, as: UTF8.self)
        let json: JSONValue =
            text.trimmingWhitespace().isEmpty ? .object([:]) : try ConfigJSON.parse(try BacktickStrings.convert(text))
        var warnings: [String] = []
        try self.init(name: name, object: try ConfigObject(json, path: ""), warnings: &warnings)
    }

    /// This configuration with the passwords of `previous` for users that have none here, so that sending back
    /// what `GET /{db}/_config` showed (passwords left out) changes no password.
    public func keepingPasswords(from previous: DatabaseConfig) -> DatabaseConfig {
        var config = self
        for (name, user) in users where user.password == nil {
            config.users[name]?.password = previous.users[name]?.password
        }
        return config
    }

    // MARK: - Serializing

    /// The configuration as `GET /{db}/_config` and `GET /_config` show it: the keys of the configuration file,
    /// with user passwords left out (spec: gateway-rest-api.md §15, §17.2).
    ///
    /// ```json
    /// {"name":"todo","server":"walrus:","bucket":"todo","revs_limit":1000,"allow_empty_password":false,
    ///  "offline":false,"users":{"user1":{"admin_channels":["user1"],"admin_roles":[]}},"roles":{}}
    /// ```
    public var jsonValue: JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name),
            "server": .string(server.description),
            "bucket": .string(bucket),
            "revs_limit": .int(Int64(revsLimit)),
            "allow_empty_password": .bool(allowEmptyPassword),
            "offline": .bool(offline),
            "users": .object(users.mapValues(\.jsonValue)),
            "roles": .object(roles.mapValues(\.jsonValue)),
        ]
        if let sync { object["sync"] = .string(sync) }
        if let cors { object["cors"] = cors.jsonValue(snakeCase: true) }
        if deltaSync { object["delta_sync"] = ["enabled": true] }
        if !allowConflicts { object["allow_conflicts"] = false }
        return .object(object)
    }
}

// MARK: - UserConfig + JSON

extension UserConfig {
    /// The user's configuration object without its password.
    var jsonValue: JSONValue {
        var object: [String: JSONValue] = [
            "admin_channels": .array(adminChannels.map { .string($0) }),
            "admin_roles": .array(adminRoles.map { .string($0) }),
        ]
        if let email { object["email"] = .string(email) }
        if disabled { object["disabled"] = .bool(true) }
        return .object(object)
    }
}

// MARK: - RoleConfig + JSON

extension RoleConfig {
    /// The role's configuration object.
    var jsonValue: JSONValue {
        .object(["admin_channels": .array(adminChannels.map { .string($0) })])
    }
}

// MARK: - CORSConfig + JSON

extension CORSConfig {
    /// The CORS object in Sync Gateway 1.x's server spelling (`loginOrigin`, `maxAge`) or 3.x's database
    /// spelling (`login_origin`, `max_age`).
    func jsonValue(snakeCase: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "origin": .array(origins.map { .string($0) }),
            snakeCase ? "login_origin" : "loginOrigin": .array(loginOrigins.map { .string($0) }),
            "headers": .array(headers.map { .string($0) }),
        ]
        if let maxAge { object[snakeCase ? "max_age" : "maxAge"] = .int(Int64(maxAge)) }
        return .object(object)
    }
}
