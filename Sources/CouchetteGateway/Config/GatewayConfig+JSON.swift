import CouchetteCore

// MARK: - GatewayConfig + JSON

extension GatewayConfig {
    /// The server configuration as `GET /_config` shows it (spec: gateway-rest-api.md §3, §17.1), with secrets
    /// left out: `adminPassword` and user passwords never appear.
    ///
    /// ```json
    /// {"interface":"0.0.0.0:4984","adminInterface":"127.0.0.1:4985","log":["HTTP"],
    ///  "logging":{"default":{"logKeys":["HTTP"],"logLevel":"info"}},"pretty":false,"compressResponses":true,
    ///  "maxRequestBodySize":67108864,"databases":{"todo":{…}}}
    /// ```
    ///
    /// - Parameters:
    ///   - databases: The databases now served (those created or removed at run time included); by default those
    ///     of the configuration.
    ///   - logSettings: The log keys and level in force; by default those of the configuration.
    public func jsonValue(databases: [DatabaseConfig]? = nil, logSettings: LogSettings? = nil) -> JSONValue {
        let logSettings = logSettings ?? LogSettings(config: self)
        let databases = databases ?? databaseNames.compactMap { self.databases[$0] }
        let keys = JSONValue.array(logSettings.keyNames.map { .string($0) })
        var appender: [String: JSONValue] = [
            "logKeys": keys,
            "logLevel": .string(LogSettings.name(of: logSettings.level)),
        ]
        if let path = logging?.logFilePath ?? logFilePath { appender["logFilePath"] = .string(path) }
        var object: [String: JSONValue] = [
            "interface": .string(interface.description),
            "adminInterface": .string(adminInterface.description),
            "log": keys,
            "logging": .object(["default": .object(appender)]),
            "pretty": .bool(pretty),
            "compressResponses": .bool(compressResponses),
            "maxRequestBodySize": .int(Int64(maxRequestBodySize)),
            "databases": .object(Dictionary(databases.map { ($0.name, $0.jsonValue) }, uniquingKeysWith: { $1 })),
        ]
        if let logFilePath { object["logFilePath"] = .string(logFilePath) }
        if let sslCert { object["SSLCert"] = .string(sslCert) }
        if let sslKey { object["SSLKey"] = .string(sslKey) }
        if let cors { object["CORS"] = cors.jsonValue(snakeCase: false) }
        if let maxHeartbeat { object["MaxHeartbeat"] = .int(Int64(maxHeartbeat)) }
        if let adminCredentials { object["adminUsername"] = .string(adminCredentials.username) }
        return .object(object)
    }
}
