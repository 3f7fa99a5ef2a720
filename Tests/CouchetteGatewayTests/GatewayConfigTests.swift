import Testing

@testable import CouchetteGateway

// MARK: - GatewayConfigTests

@Suite("Gateway configuration file", .timeLimit(.minutes(5)))
struct GatewayConfigTests {
    // MARK: - Defaults

    @Test("A config-less run uses the default interfaces and no databases")
    func defaults() throws {
        let config = GatewayConfig()
        #expect(config.interface == InterfaceAddress(host: "0.0.0.0", port: 4984))
        #expect(config.adminInterface == InterfaceAddress(host: "127.0.0.1", port: 4985))
        #expect(config.databases.isEmpty)
        #expect(config.log.isEmpty)
        #expect(config.pretty == false)
        #expect(config.compressResponses == true)
        #expect(try GatewayConfig(json: "{}") == config)
    }

    @Test("The admin interface defaults to loopback only")
    func adminInterfaceDefaultsToLoopback() throws {
        let config = try GatewayConfig(json: #"{"interface": ":4984"}"#)
        #expect(config.adminInterface.host == "127.0.0.1")
        #expect(config.adminInterface.port == 4985)
        #expect(config.interface.host == "0.0.0.0")
    }

    @Test("Database defaults: walrus in memory, revs_limit 1000, bucket named after the database")
    func databaseDefaults() throws {
        let config = try GatewayConfig(json: #"{"databases": {"db": {}}}"#)
        let database = try #require(config.databases["db"])
        #expect(database.server == .memory)
        #expect(database.revsLimit == 1000)
        #expect(database.bucket == "db")
        #expect(database.sync == nil)
        #expect(database.offline == false)
        #expect(database.allowEmptyPassword == false)
        #expect(database.allowConflicts)
    }

    // MARK: - Full file

    @Test("Every supported key is read")
    func fullConfig() throws {
        let config = try GatewayConfig(
            json: """
                {
                  "interface": "127.0.0.1:5984",
                  "adminInterface": "[::1]:5985",
                  "log": ["HTTP", "CRUD"],
                  "logging": {"default": {"logFilePath": "/tmp/sg.log", "logKeys": ["Auth"], "logLevel": "debug",
                                          "rotation": {"maxsize": 1}}},
                  "pretty": true,
                  "compressResponses": false,
                  "MaxHeartbeat": 300,
                  "CORS": {"origin": ["http://example.com"], "loginOrigin": ["http://login.example.com"],
                           "headers": ["Content-Type"], "maxAge": 1728000},
                  "databases": {
                    "todo": {
                      "server": "walrus:/var/lib/couchette",
                      "bucket": "todo-bucket",
                      "revs_limit": 500,
                      "allow_empty_password": true,
                      "offline": true,
                      "allow_conflicts": false,
                      "users": {
                        "GUEST": {"disabled": false, "admin_channels": ["public"]},
                        "user1": {"password": "pass", "admin_roles": ["moderator"], "email": "u1@example.com"}
                      },
                      "roles": {"moderator": {"admin_channels": ["moderators"]}},
                      "sync": "function(doc, oldDoc){channel(doc.channels);}",
                      "import_docs": "continuous", "shadow": {}, "feed_type": "DCP", "cache": {"max_wait_pending": 5},
                      "rev_cache_size": 5000, "event_handlers": {}, "unsupported": {}, "oidc": {},
                      "cors": {"origin": ["*"], "login_origin": ["*"], "max_age": 60}
                    },
                    "files": {"server": "sqlite:/data/files.sqlite"}
                  }
                }
                """
        )
        #expect(config.interface == InterfaceAddress(host: "127.0.0.1", port: 5984))
        #expect(config.adminInterface == InterfaceAddress(host: "::1", port: 5985))
        #expect(config.log == ["HTTP", "CRUD"])
        #expect(config.logging == LoggingConfig(logFilePath: "/tmp/sg.log", logKeys: ["Auth"], logLevel: "debug"))
        #expect(config.logKeys.contains("auth"))
        #expect(config.logKeys.contains(LogKeys.http))
        #expect(config.pretty)
        #expect(config.compressResponses == false)
        #expect(config.maxHeartbeat == 300)
        #expect(config.cors?.origins == ["http://example.com"])
        #expect(config.cors?.loginOrigins == ["http://login.example.com"])
        #expect(config.cors?.maxAge == 1_728_000)
        #expect(config.databaseNames == ["files", "todo"])

        let todo = try #require(config.databases["todo"])
        #expect(todo.server == .directory("/var/lib/couchette"))
        #expect(todo.bucket == "todo-bucket")
        #expect(todo.revsLimit == 500)
        #expect(todo.allowEmptyPassword)
        #expect(todo.offline)
        #expect(todo.allowConflicts == false)
        #expect(todo.jsonValue["allow_conflicts"] == false)
        #expect(config.databases["files"]?.jsonValue["allow_conflicts"] == nil)
        #expect(todo.sync == "function(doc, oldDoc){channel(doc.channels);}")
        #expect(todo.users["GUEST"] == UserConfig(name: "GUEST", adminChannels: ["public"]))
        #expect(todo.users["GUEST"]?.isGuest == true)
        #expect(
            todo.users["user1"]
                == UserConfig(name: "user1", password: "pass", adminRoles: ["moderator"], email: "u1@example.com")
        )
        #expect(todo.roles["moderator"] == RoleConfig(name: "moderator", adminChannels: ["moderators"]))
        #expect(todo.cors == CORSConfig(origins: ["*"], loginOrigins: ["*"], maxAge: 60))
        #expect(config.databases["files"]?.server == .file("/data/files.sqlite"))
        #expect(config.warnings.isEmpty, "advanced keys are accepted silently: \(config.warnings)")
    }

    // MARK: - Case-insensitive keys

    @Test("Top-level and server keys match case-insensitively, database names do not")
    func caseInsensitiveKeys() throws {
        let config = try GatewayConfig(
            json: """
                {"Databases": {"todo": {"Server": "walrus:/tmp/x", "REVS_LIMIT": 20, "Users": {"u": {"Password": "p"}}}},
                 "AdminInterface": "127.0.0.1:5985", "INTERFACE": ":5984", "Log": ["HTTP"], "Pretty": true}
                """
        )
        #expect(config.adminInterface == InterfaceAddress(host: "127.0.0.1", port: 5985))
        #expect(config.interface == InterfaceAddress(host: "0.0.0.0", port: 5984))
        #expect(config.log == ["HTTP"])
        #expect(config.pretty)
        let todo = try #require(config.databases["todo"])
        #expect(todo.server == .directory("/tmp/x"))
        #expect(todo.revsLimit == 20)
        #expect(todo.users["u"]?.password == "p")
        #expect(config.warnings.isEmpty)
    }

    @Test("An exact key match wins over a case-insensitive one")
    func exactKeyWins() throws {
        let config = try GatewayConfig(json: #"{"Pretty": false, "pretty": true, "PRETTY": false}"#)
        #expect(config.pretty)
    }

    // MARK: - Warnings and ignored values

    @Test("Unknown keys are ignored with a warning naming them")
    func unknownKeysWarn() throws {
        let config = try GatewayConfig(
            json: #"{"colour": "blue", "databases": {"db": {"flavour": 1, "users": {"u": {"hat": true}}}}}"#
        )
        #expect(config.warnings.contains("colour: unknown key ignored"))
        #expect(config.warnings.contains("databases.db.flavour: unknown key ignored"))
        #expect(config.warnings.contains("databases.db.users.u.hat: unknown key ignored"))
    }

    @Test("revs_limit values of zero or less are ignored", arguments: [0, -5])
    func nonPositiveRevsLimitIgnored(limit: Int) throws {
        let config = try GatewayConfig(json: #"{"databases": {"db": {"revs_limit": \#(limit)}}}"#)
        #expect(config.databases["db"]?.revsLimit == 1000)
        #expect(config.warnings.count == 1)
    }

    // MARK: - Errors naming the field

    @Test(
        "Wrong types are rejected with the field path",
        arguments: [
            (#"{"interface": 4984}"#, "interface", "interface: expected a string, found a number"),
            (
                #"{"databases": {"todo": {"revs_limit": "500"}}}"#, "databases.todo.revs_limit",
                "databases.todo.revs_limit: expected an integer, found a string"
            ),
            (
                #"{"databases": {"todo": {"users": {"user1": {"password": 1234}}}}}"#,
                "databases.todo.users.user1.password",
                "databases.todo.users.user1.password: expected a string, found a number"
            ),
            (
                #"{"databases": {"todo": {"server": "http://localhost:8091"}}}"#, "databases.todo.server",
                "databases.todo.server: Couchbase Server"
            ),
            (
                #"{"databases": {"todo": {"server": "mongodb://x"}}}"#, "databases.todo.server",
                "databases.todo.server: unsupported server URL \"mongodb://x\""
            ),
            (#"{"databases": []}"#, "databases", "databases: expected an object, found an array"),
            (#"{"databases": {"todo": 3}}"#, "databases.todo", "databases.todo: expected an object, found a number"),
            (#"{"log": ["HTTP", 7]}"#, "log[1]", "log[1]: expected a string, found a number"),
            (#"{"pretty": "yes"}"#, "pretty", "pretty: expected a boolean, found a string"),
            (
                #"{"databases": {"todo": {"revs_limit": 1.5}}}"#, "databases.todo.revs_limit",
                "databases.todo.revs_limit: expected an integer, found a number"
            ),
            (
                #"{"databases": {"todo": {"users": {"u": {"admin_channels": "a"}}}}}"#,
                "databases.todo.users.u.admin_channels",
                "databases.todo.users.u.admin_channels: expected an array of strings, found a string"
            ),
            (
                #"{"databases": {"todo": {"roles": {"r": {"admin_channels": [1]}}}}}"#,
                "databases.todo.roles.r.admin_channels[0]",
                "databases.todo.roles.r.admin_channels[0]: expected a string, found a number"
            ),
            (#"{"adminInterface": "localhost"}"#, "adminInterface", "adminInterface: invalid address"),
            (#"{"databases": {"Todo": {}}}"#, "databases.Todo", "databases.Todo: invalid database name"),
            (#"{"databases": {"todo": {"sync": false}}}"#, "databases.todo.sync", "expected a string, found a boolean"),
        ]
    )
    func wrongTypesNameTheField(json: String, field: String, message: String) throws {
        let error = try #require(throws: GatewayError.self) { try GatewayConfig(json: json) }
        #expect(error.field == field)
        #expect(error.reason.contains(message), "\(error.reason)")
        #expect(error.statusCode == 400)
    }

    @Test(
        "Malformed JSON is rejected with its line and column",
        arguments: [
            ("{\n  \"log\": [\"HTTP\"],\n  \"pretty\": tru\n}", "line 3, column 13"),
            ("{\"databases\": {\"db\": {},}}", "line 1, column 25"),
            ("{\n\"a\": 1\n\"b\": 2}", "line 3, column 1"),
            ("{\"a\": \"unterminated}", "Unterminated string"),
            ("", "Unexpected end of input"),
            ("{} {}", "Unexpected data after the JSON value"),
        ]
    )
    func malformedJSON(json: String, fragment: String) throws {
        let error = try #require(throws: GatewayError.self) { try GatewayConfig(json: json) }
        #expect(error.reason.contains("invalid JSON"), "\(error.reason)")
        #expect(error.reason.contains(fragment), "\(error.reason)")
    }

    @Test("A top level that is not an object is rejected")
    func topLevelMustBeObject() throws {
        let error = try #require(throws: GatewayError.self) { try GatewayConfig(json: "[1, 2]") }
        #expect(error.reason == "expected a JSON object at the top level, found an array")
    }

    @Test("A missing file is reported with its path")
    func missingFile() throws {
        let error = try #require(throws: GatewayError.self) {
            try GatewayConfig.load(contentsOf: "/nonexistent/couchette.json")
        }
        #expect(error.reason == "cannot read configuration file \"/nonexistent/couchette.json\": no such file")
    }

    @Test("JSON strings with escapes, unicode and surrogate pairs are decoded")
    func stringEscapes() throws {
        let config = try GatewayConfig(
            json: #"{"databases": {"db": {"sync": "a\"b\\c\/d\n\t\u00e9\ud83d\ude00"}}}"#
        )
        #expect(config.databases["db"]?.sync == "a\"b\\c/d\n\té😀")
    }

    // MARK: - Secrets

    @Test("Passwords never appear in descriptions, debug descriptions or dumps")
    func passwordsRedacted() throws {
        let config = try GatewayConfig(
            json: #"{"databases": {"db": {"users": {"alice": {"password": "s3cr3t-pw", "admin_channels": ["x"]}}}}}"#
        )
        let user = try #require(config.databases["db"]?.users["alice"])
        #expect(user.password == "s3cr3t-pw")
        var dumped = ""
        dump(config, to: &dumped)
        var dumpedUser = ""
        dump(user, to: &dumpedUser)
        for text in [
            String(describing: config), String(reflecting: config), String(describing: user),
            String(reflecting: user), String(describing: config.databases["db"]!), dumped, dumpedUser,
            "\(config.databases)",
        ] {
            #expect(!text.contains("s3cr3t-pw"), "\(text)")
        }
        #expect(String(describing: user).contains("<redacted>"))
        #expect(String(describing: user).contains("alice"))
    }
}
