import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AuthPrincipalTests

@Suite("Auth: users, roles and admin API bodies", .timeLimit(.minutes(5)))
struct AuthPrincipalTests {
    let moderator = Role(name: "moderator", adminChannels: ["moderators"], channelsFromGrants: ["mod-granted"])

    // MARK: - Channels

    @Test("all_channels = admin ∪ grants ∪ role channels ∪ {\"!\"}")
    func allChannels() {
        let user = User(
            name: "user1",
            adminChannels: ["user1"],
            adminRoles: ["moderator"],
            rolesFromGrants: ["editor"],
            channelsFromGrants: ["task-list.A"]
        )
        let editor = Role(name: "editor", adminChannels: ["drafts"])
        let stranger = Role(name: "stranger", adminChannels: ["secret"])
        #expect(
            user.allChannels(roles: [moderator, editor, stranger])
                == ["!", "user1", "task-list.A", "moderators", "mod-granted", "drafts"]
        )
        #expect(user.roleNames == ["moderator", "editor"])
        #expect(User(name: "bare").allChannels(roles: []) == ["!"])
    }

    @Test("A * grant collapses the channel set to {\"*\"}")
    func wildcard() {
        #expect(User(name: "a", adminChannels: ["*", "x"]).allChannels(roles: []) == ["*"])
        let all = Role(name: "all", adminChannels: ["*"])
        #expect(User(name: "b", adminRoles: ["all"]).allChannels(roles: [all]) == ["*"])
        #expect(all.allChannels == ["*"])
    }

    @Test("GUEST is disabled and channel-less by default")
    func defaultGuest() {
        let guest = User.defaultGuest
        #expect(guest.name == "GUEST")
        #expect(guest.isGuest && guest.disabled && guest.passwordHash == nil && guest.adminChannels.isEmpty)
    }

    // MARK: - JSON output

    @Test("User JSON has the admin API's shape and never the password")
    func userJSON() throws {
        let hash = try PasswordHasher(cost: 4).hash("secret-pass")
        let user = User(
            name: "user1",
            passwordHash: hash,
            adminChannels: ["user1"],
            adminRoles: ["moderator"],
            channelsFromGrants: ["task-list.A"]
        )
        let json = user.jsonValue(roles: [moderator])
        #expect(
            json
                == [
                    "name": "user1",
                    "admin_channels": ["user1"],
                    "all_channels": ["!", "mod-granted", "moderators", "task-list.A", "user1"],
                    "admin_roles": ["moderator"],
                    "roles": ["moderator"],
                ]
        )
        let text = json.serializedString()
        #expect(!text.contains("password") && !text.contains(hash) && !text.contains("$2b$"))
        #expect(json["email"] == nil && json["disabled"] == nil)

        var disabled = user
        disabled.email = "u@example.com"
        disabled.disabled = true
        #expect(disabled.jsonValue(roles: [])["email"] == "u@example.com")
        #expect(disabled.jsonValue(roles: [])["disabled"] == true)
    }

    @Test("Descriptions and dumps never show the hash")
    func redaction() throws {
        let hash = try PasswordHasher(cost: 4).hash("secret-pass")
        let user = User(name: "user1", passwordHash: hash)
        var dumped = ""
        dump(user, to: &dumped)
        for text in [user.description, user.debugDescription, "\(user)", String(reflecting: user), dumped] {
            #expect(!text.contains(hash) && !text.contains("$2b$"), "\(text)")
        }
        let update = UserUpdate(name: "user1", password: "hunter2")
        var dumpedUpdate = ""
        dump(update, to: &dumpedUpdate)
        #expect(!update.description.contains("hunter2") && !dumpedUpdate.contains("hunter2"))
        let credentials = BasicCredentials(username: "u", password: "hunter2")
        #expect(!"\(credentials)".contains("hunter2"))
    }

    @Test("Role JSON")
    func roleJSON() {
        #expect(
            moderator.jsonValue
                == ["name": "moderator", "admin_channels": ["moderators"], "all_channels": ["mod-granted", "moderators"]]
        )
    }

    @Test("Stored form round-trips through Codable, hash included")
    func codable() throws {
        let user = User(name: "u", passwordHash: "$2b$04$x", adminChannels: ["a"], sequence: 7)
        let data = try JSONEncoder().encode(user)
        #expect(try JSONDecoder().decode(User.self, from: data) == user)
        #expect(try JSONDecoder().decode(Role.self, from: JSONEncoder().encode(moderator)) == moderator)
    }

    // MARK: - PUT body parsing

    @Test("PUT body parsing")
    func parsing() throws {
        let update = try UserUpdate(
            parsing: Array(
                #"{"name":"user1","password":"pass","admin_channels":["a","b"],"admin_roles":["moderator"],"email":"u@x.org","disabled":true,"all_channels":["ignored"],"roles":[]}"#
                    .utf8
            ),
            name: "user1"
        )
        #expect(update.name == "user1" && update.password == "pass" && update.changesPassword)
        #expect(update.adminChannels == ["a", "b"] && update.adminRoles == ["moderator"])
        #expect(update.email == "u@x.org" && update.disabled)

        let minimal = try UserUpdate(parsing: JSONValue.object([:]), name: "user2")
        #expect(minimal == UserUpdate(name: "user2"))
        #expect(!minimal.changesPassword)
        #expect(try UserUpdate(parsing: ["name": "posted"], name: nil).name == "posted")
    }

    @Test(
        "PUT body errors are 400s naming the field",
        arguments: [
            (#"{"password":3}"#, #""password" must be a string"#),
            (#"{"admin_channels":"a"}"#, #""admin_channels" must be an array of strings"#),
            (#"{"admin_channels":["a",1]}"#, #""admin_channels" must be an array of strings"#),
            (#"{"admin_roles":{}}"#, #""admin_roles" must be an array of strings"#),
            (#"{"email":false}"#, #""email" must be a string"#),
            (#"{"disabled":"yes"}"#, #""disabled" must be a boolean"#),
            (#"{"name":7}"#, #""name" must be a string"#),
            (#"{"name":"other"}"#, "Name mismatch (can't change name)"),
            (#"{"admin_channels":["a,b"]}"#, "Illegal channel name"),
            (#"{"admin_channels":[""]}"#, "Illegal channel name"),
            (#"{"admin_roles":["role:x"]}"#, "Invalid role name"),
            (#"[1]"#, "Request body must be a JSON object"),
            (#"{"#, "Bad JSON"),
        ]
    )
    func parsingErrors(body: String, reason: String) {
        #expect {
            try UserUpdate(parsing: Array(body.utf8), name: "user1")
        } throws: { error in
            guard let error = error as? GatewayError else { return false }
            return error.statusCode == 400 && error.reason == reason
        }
    }

    @Test("Name rules")
    func names() {
        #expect(throws: GatewayError.badRequest("Missing name property")) {
            try UserUpdate(parsing: JSONValue.object([:]), name: nil)
        }
        #expect(throws: GatewayError.badRequest("Invalid name")) {
            try UserUpdate(parsing: JSONValue.object([:]), name: "bad name")
        }
        #expect(throws: GatewayError.badRequest("Invalid name")) {
            try RoleUpdate(parsing: ["name": "a:b"], name: nil)
        }
        #expect(PrincipalName.isValid("user-1+x.y@z%_"))
        #expect(!PrincipalName.isValid("é"))
        #expect(!PrincipalName.isValid("role:moderator"))
    }

    @Test("Applying updates: replace semantics, password rules")
    func applying() throws {
        let hasher = PasswordHasher(cost: 4)
        let created = try UserUpdate(name: "u", password: "pass", adminChannels: ["a"])
            .applied(to: nil, hasher: hasher, allowEmptyPassword: false)
        #expect(created.passwordHash.map { hasher.verify("pass", against: $0) } == true)

        var stored = created
        stored.channelsFromGrants = ["granted"]
        let replaced = try UserUpdate(name: "u", adminRoles: ["r"])
            .applied(to: stored, hasher: hasher, allowEmptyPassword: false)
        #expect(replaced.adminChannels.isEmpty && replaced.adminRoles == ["r"])
        #expect(replaced.passwordHash == created.passwordHash)
        #expect(replaced.channelsFromGrants == ["granted"])

        #expect(throws: GatewayError.badRequest("Empty passwords are not allowed ")) {
            try UserUpdate(name: "new").applied(to: nil, hasher: hasher, allowEmptyPassword: false)
        }
        #expect(throws: GatewayError.badRequest("Empty passwords are not allowed ")) {
            try UserUpdate(name: "u", password: "").applied(to: stored, hasher: hasher, allowEmptyPassword: false)
        }
        #expect(throws: GatewayError.badRequest("Passwords must be at least three 3 characters")) {
            try UserUpdate(name: "new", password: "ab").applied(to: nil, hasher: hasher, allowEmptyPassword: false)
        }
        let empty = try UserUpdate(name: "new").applied(to: nil, hasher: hasher, allowEmptyPassword: true)
        #expect(empty.passwordHash.map { hasher.verify("", against: $0) } == true)
        let guest = try UserUpdate(name: "GUEST", password: "ignored", adminChannels: ["public"])
            .applied(to: nil, hasher: hasher, allowEmptyPassword: false)
        #expect(guest.passwordHash == nil && guest.adminChannels == ["public"])

        let role = try RoleUpdate(parsing: ["admin_channels": ["x"]], name: "r").applied(to: moderator)
        #expect(role.name == "r" && role.adminChannels == ["x"] && role.channelsFromGrants == ["mod-granted"])
    }
}
