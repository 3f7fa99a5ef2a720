// MARK: - DatabaseConfig

/// One entry of the configuration file's `databases` object.
///
/// ```json
/// "todo": {"server": "walrus:", "revs_limit": 500, "users": {"user1": {"password": "pass"}},
///          "sync": `function(doc) {…}`}
/// ```
///
/// Couchbase Server and advanced keys (`import_docs`, `shadow`, `feed_type`, `cache`, `rev_cache_size`,
/// `event_handlers`, `unsupported`, `oidc`, …) are accepted and ignored. Spec: gateway-rest-api.md §17.2.
public struct DatabaseConfig: Sendable, Equatable {
    // MARK: - Properties

    /// The database name (the key in `databases`).
    public var name: String

    /// Where the data lives (`server`); default `walrus:` (in memory).
    public var server: StorageLocation

    /// The bucket name (`bucket`); defaults to the database name.
    public var bucket: String

    /// The JavaScript sync function source (`sync`); `nil` means the default `function(doc){channel(doc.channels);}`.
    public var sync: String?

    /// Users by name (`users`).
    public var users: [String: UserConfig]

    /// Roles by name (`roles`).
    public var roles: [String: RoleConfig]

    /// The maximum revision-tree depth kept (`revs_limit`), default 1000.
    public var revsLimit: Int

    /// Whether users may have an empty password (`allow_empty_password`).
    public var allowEmptyPassword: Bool

    /// Whether the database starts offline (`offline`).
    public var offline: Bool

    /// Per-database CORS settings (`cors`, SG 3.x spelling).
    public var cors: CORSConfig?

    /// Whether BLIP replications may exchange revisions as JSON deltas (`delta_sync.enabled`, off by default as in
    /// Sync Gateway).
    public var deltaSync: Bool

    /// Whether Couchbase Lite clients may push conflicts (`allow_conflicts`, default `true`, as Sync Gateway 2.0).
    /// When `false` (Sync Gateway's only mode since 3.0) a pushing BLIP client's `changes` gets 409 "Use
    /// 'proposeChanges' instead" and every pushed `rev` must descend from the document's current revision (409
    /// otherwise), `noconflicts` or not. The REST protocol's `new_edits=false` writes still store conflicts, as Sync
    /// Gateway 3 does (CouchDB and PouchDB replicators rely on it).
    public var allowConflicts: Bool

    // MARK: - Defaults

    /// The default `revs_limit`.
    public static let defaultRevsLimit = 1000

    /// The sync function used when `sync` is absent.
    public static let defaultSyncFunction = "function(doc){channel(doc.channels);}"

    // MARK: - Initialiser

    /// Creates a database configuration.
    public init(
        name: String,
        server: StorageLocation = .memory,
        bucket: String? = nil,
        sync: String? = nil,
        users: [String: UserConfig] = [:],
        roles: [String: RoleConfig] = [:],
        revsLimit: Int = DatabaseConfig.defaultRevsLimit,
        allowEmptyPassword: Bool = false,
        offline: Bool = false,
        cors: CORSConfig? = nil,
        deltaSync: Bool = false,
        allowConflicts: Bool = true
    ) {
        self.name = name
        self.server = server
        self.bucket = bucket ?? name
        self.sync = sync
        self.users = users
        self.roles = roles
        self.revsLimit = revsLimit
        self.allowEmptyPassword = allowEmptyPassword
        self.offline = offline
        self.cors = cors
        self.deltaSync = deltaSync
        self.allowConflicts = allowConflicts
    }

    // MARK: - Names

    /// Whether `name` is a valid database name: a lower-case letter followed by `a-z 0-9 _ $ ( ) + - /`
    /// (Sync Gateway's rule).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_$()+-/".unicodeScalars)
        return name.unicodeScalars.allSatisfy { allowed.contains($0) }
    }

    // MARK: - Parsing

    /// Keys that are read.
    static let supportedKeys: Set<String> = [
        "server", "bucket", "sync", "users", "roles", "revs_limit", "allow_empty_password", "offline", "cors",
        "delta_sync", "allow_conflicts",
    ]

    /// Keys accepted and ignored: Couchbase Server connection settings and advanced options.
    static let ignoredKeys: Set<String> = [
        "name", "pool", "username", "password", "certpath", "keypath", "cacertpath", "kv_tls_port",
        "import_docs", "import_filter", "import_backup", "shadow", "feed_type", "cache", "rev_cache_size",
        "rev_cache", "event_handlers", "unsupported", "oidc", "view_query_timeout_secs", "local_doc_expiry_secs",
        "enable_shared_bucket_access", "session_cookie_secure", "session_cookie_name",
        "send_www_authenticate_header", "num_index_replicas", "use_views", "bucket_op_timeout_ms",
        "compact_interval_days", "serve_insecure_attachment_types", "channel_index", "sgreplicate", "deltaSync",
    ]

    /// Reads a database from its configuration object; errors name fields below `databases.<name>`.
    init(name: String, object: ConfigObject, warnings: inout [String]) throws(GatewayError) {
        guard Self.isValidName(name) else {
            throw .invalidConfig(
                field: object.path,
                problem: "invalid database name \"\(name)\" (use a lower-case letter followed by a-z, 0-9, _$()+-/)"
            )
        }
        let server =
            try object.string("server").map { text throws(GatewayError) in
                try StorageLocation(parsing: text, field: object.fieldPath("server"))
            } ?? .memory

        var users: [String: UserConfig] = [:]
        for (userName, userObject) in try object.objectMap("users") {
            users[userName] = try UserConfig(name: userName, object: userObject, warnings: &warnings)
        }
        var roles: [String: RoleConfig] = [:]
        for (roleName, roleObject) in try object.objectMap("roles") {
            roles[roleName] = try RoleConfig(name: roleName, object: roleObject, warnings: &warnings)
        }

        var revsLimit = Self.defaultRevsLimit
        if let limit = try object.integer("revs_limit") {
            if limit > 0 {
                revsLimit = limit
            } else {
                warnings.append("\(object.fieldPath("revs_limit")): \(limit) is not positive; using \(revsLimit)")
            }
        }

        let cors = try object.object("cors").map { corsObject throws(GatewayError) in
            try CORSConfig(object: corsObject, warnings: &warnings)
        }

        self.init(
            name: name,
            server: server,
            bucket: try object.string("bucket"),
            sync: try object.string("sync"),
            users: users,
            roles: roles,
            revsLimit: revsLimit,
            allowEmptyPassword: try object.bool("allow_empty_password") ?? false,
            offline: try object.bool("offline") ?? false,
            cors: cors,
            deltaSync: try object.object("delta_sync")?.bool("enabled") ?? false,
            allowConflicts: try object.bool("allow_conflicts") ?? true
        )
        for key in object.unknownKeys(known: Self.supportedKeys.union(Self.ignoredKeys)) {
            warnings.append("\(object.fieldPath(key)): unknown key ignored")
        }
    }
}

// MARK: - CustomStringConvertible

extension DatabaseConfig: CustomStringConvertible {
    /// A summary without secrets: user passwords are redacted.
    public var description: String {
        let userList = users.keys.sorted().map { users[$0]!.description }.joined(separator: ", ")
        let roleList = roles.keys.sorted().map { roles[$0]!.description }.joined(separator: ", ")
        return "DatabaseConfig(name: \"\(name)\", server: \(server.redacted), bucket: \"\(bucket)\", revs_limit: \(revsLimit), "
            + "offline: \(offline), sync: \(sync == nil ? "default" : "\(sync!.count) characters"), "
            + "users: [\(userList)], roles: [\(roleList)])"
    }
}
