import CouchetteBLIP
import CouchetteCore
import Foundation

// MARK: - Loading

extension GatewayConfig {
    /// Reads and parses a configuration file.
    ///
    /// ```swift
    /// let config = try GatewayConfig.load(contentsOf: "sync-gateway-config.json")
    /// ```
    ///
    /// - Parameter path: The file path.
    /// - Throws: ``GatewayError`` naming the file when it cannot be read, or the field at fault when it is malformed.
    public static func load(contentsOf path: String) throws(GatewayError) -> GatewayConfig {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .invalidConfig(field: "", problem: "cannot read configuration file \"\(path)\": no such file")
        }
        guard !isDirectory.boolValue else {
            throw .invalidConfig(field: "", problem: "cannot read configuration file \"\(path)\": it is a directory")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .invalidConfig(
                field: "",
                problem: "cannot read configuration file \"\(path)\": \(error.localizedDescription)"
            )
        }
        return try GatewayConfig(data: data)
    }

    /// Parses configuration file contents.
    ///
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` when the data is not UTF-8 or the JSON is malformed.
    public init(data: Data) throws(GatewayError) {
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidConfig(field: "", problem: "the configuration file is not valid UTF-8 text")
        }
        try self.init(json: text)
    }

    /// Parses configuration text: JSON extended with back-quoted strings.
    ///
    /// ```swift
    /// let config = try GatewayConfig(json: #"{"databases": {"db": {"server": "walrus:"}}}"#)
    /// ```
    ///
    /// Top-level and server keys match case-insensitively, like Sync Gateway 1.x; unknown keys are ignored and
    /// listed in ``warnings``.
    ///
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)``; malformed JSON reports line and column, wrong types
    ///   name the field path, e.g. `databases.todo.revs_limit: expected an integer, found a string`.
    public init(json text: String) throws(GatewayError) {
        let root = try ConfigJSON.parse(try BacktickStrings.convert(text))
        guard case .object = root else {
            throw .invalidConfig(
                field: "", problem: "expected a JSON object at the top level, found \(root.configKindDescription)")
        }
        try self.init(object: try ConfigObject(root, path: ""))
    }

    // MARK: - Server keys

    /// Server keys that are read.
    static let supportedKeys: Set<String> = [
        "interface", "adminInterface", "SSLCert", "SSLKey", "log", "logFilePath", "logging", "pretty",
        "compressResponses", "CORS", "MaxHeartbeat", "databases", "maxRequestBodySize", "adminUsername", "adminPassword",
        "ServerReadTimeout", "ServerWriteTimeout", "ServerIdleTimeout", "ServerShutdownTimeout",
    ]

    /// Server keys accepted and ignored.
    static let ignoredKeys: Set<String> = [
        "maxIncomingConnections", "maxFileDescriptors", "profileInterface",
        "adminUI", "ConfigServer", "persona", "facebook", "google", "deploymentID", "slowServerCallWarningThreshold",
        "maxCouchbaseConnections", "maxCouchbaseOverflow", "couchbaseKeepaliveInterval", "cluster_config",
        "replications", "unsupported", "verbose",
    ]

    /// Reads the top-level object.
    init(object: ConfigObject) throws(GatewayError) {
        var warnings: [String] = []

        let interface = try object.string("interface").map { text throws(GatewayError) in
            try InterfaceAddress(parsing: text, field: object.fieldPath("interface"))
        }
        let adminInterface = try object.string("adminInterface").map { text throws(GatewayError) in
            try InterfaceAddress(parsing: text, field: object.fieldPath("adminInterface"))
        }
        let logging = try object.object("logging").map { loggingObject throws(GatewayError) in
            try LoggingConfig(object: loggingObject, warnings: &warnings)
        }
        let cors = try object.object("CORS").map { corsObject throws(GatewayError) in
            try CORSConfig(object: corsObject, warnings: &warnings)
        }
        let maxHeartbeat = try object.integer("MaxHeartbeat")
        if let maxHeartbeat, maxHeartbeat < 0 {
            throw object.invalid("MaxHeartbeat", "expected a non-negative number of seconds")
        }

        let maxRequestBodySize = try object.integer("maxRequestBodySize") ?? GatewayConfig.defaultMaxRequestBodySize
        if maxRequestBodySize < 1 {
            throw object.invalid("maxRequestBodySize", "expected a positive number of bytes")
        }
        var connectionLimits = ConnectionLimits()
        for (key, path) in ConnectionLimits.timeoutKeys {
            guard let seconds = try object.number(key) else { continue }
            guard seconds > 0, seconds <= 86_400 else {
                throw object.invalid(key, "expected a number of seconds above 0 and at most 86400")
            }
            connectionLimits[keyPath: path] = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        let adminUsername = try object.string("adminUsername")
        let adminPassword = try object.string("adminPassword")
        if (adminUsername == nil) != (adminPassword == nil) || adminUsername?.isEmpty == true {
            throw object.invalid(
                adminUsername == nil ? "adminUsername" : "adminPassword",
                "adminUsername and adminPassword go together and must not be empty")
        }

        var databases: [String: DatabaseConfig] = [:]
        for (name, databaseObject) in try object.objectMap("databases") {
            databases[name] = try DatabaseConfig(name: name, object: databaseObject, warnings: &warnings)
        }

        self.init(
            interface: interface ?? .defaultPublic,
            adminInterface: adminInterface ?? .defaultAdmin,
            sslCert: try object.string("SSLCert"),
            sslKey: try object.string("SSLKey"),
            log: try object.stringArray("log") ?? [],
            logFilePath: try object.string("logFilePath"),
            logging: logging,
            pretty: try object.bool("pretty") ?? false,
            compressResponses: try object.bool("compressResponses") ?? true,
            cors: cors,
            maxHeartbeat: maxHeartbeat,
            maxRequestBodySize: maxRequestBodySize,
            connectionLimits: connectionLimits,
            adminCredentials: adminUsername.flatMap { name in
                adminPassword.map { BasicCredentials(username: name, password: $0) }
            },
            databases: databases,
            warnings: []
        )
        for key in object.unknownKeys(known: Self.supportedKeys.union(Self.ignoredKeys)) {
            warnings.append("\(key): unknown key ignored")
        }
        self.warnings = warnings
    }
}
