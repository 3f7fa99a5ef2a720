import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - AuthConfigLoaderTests

@Suite("Auth: applying the configuration's users and roles", .timeLimit(.minutes(5)))
struct AuthConfigLoaderTests {
    let store: any PrincipalStore = InMemoryPrincipalStore()
    let hasher = AuthCountingHasher()
    var loader: PrincipalConfigLoader { PrincipalConfigLoader(hasher: hasher) }

    func config(
        users: [UserConfig] = [],
        roles: [RoleConfig] = [],
        allowEmptyPassword: Bool = false
    ) -> DatabaseConfig {
        DatabaseConfig(
            name: "todo",
            users: Dictionary(uniqueKeysWithValues: users.map { ($0.name, $0) }),
            roles: Dictionary(uniqueKeysWithValues: roles.map { ($0.name, $0) }),
            allowEmptyPassword: allowEmptyPassword
        )
    }

    @Test("Creates users with hashed passwords and roles")
    func creates() throws {
        try loader.apply(
            config(
                users: [UserConfig(name: "user1", password: "pass", adminChannels: ["c"], adminRoles: ["moderator"])],
                roles: [RoleConfig(name: "moderator", adminChannels: ["moderators"])]
            ),
            to: store
        )
        let user = try #require(try store.user(named: "user1"))
        #expect(user.passwordHash?.hasPrefix("$2b$04$") == true)
        #expect(user.passwordHash.map { hasher.verify("pass", against: $0) } == true)
        #expect(user.adminChannels == ["c"] && user.adminRoles == ["moderator"])
        #expect(try store.role(named: "moderator")?.adminChannels == ["moderators"])
        #expect(try store.allChannels(of: user) == ["!", "c", "moderators"])
        let auth = Authenticator(store: store, hasher: hasher)
        #expect(try auth.authenticate(basic: "user1", password: "pass").name == "user1")
    }

    @Test("An existing user is not overwritten; roles are updated")
    func existingUser() throws {
        try loader.apply(config(users: [UserConfig(name: "user1", password: "pass", adminChannels: ["c"])]), to: store)
        var user = try #require(try store.user(named: "user1"))
        user.adminChannels = ["changed-by-admin-api"]
        try store.putUser(user)
        try store.putRole(Role(name: "moderator", adminChannels: ["old"], channelsFromGrants: ["granted"]))
        let hashesBefore = hasher.hashCount

        try loader.apply(
            config(
                users: [UserConfig(name: "user1", password: "other", adminChannels: ["c"])],
                roles: [RoleConfig(name: "moderator", adminChannels: ["new"])]
            ),
            to: store
        )
        #expect(try store.user(named: "user1") == user)
        #expect(hasher.hashCount == hashesBefore)
        #expect(try store.role(named: "moderator") == Role(name: "moderator", adminChannels: ["new"], channelsFromGrants: ["granted"]))
    }

    @Test("GUEST is re-applied at every start, keeping document grants")
    func guestReapplied() throws {
        try loader.apply(config(users: [UserConfig(name: "GUEST", adminChannels: ["public"])]), to: store)
        var guest = try #require(try store.user(named: "GUEST"))
        #expect(!guest.disabled && guest.adminChannels == ["public"] && guest.passwordHash == nil)
        guest.channelsFromGrants = ["granted"]
        try store.putUser(guest)

        try loader.apply(config(users: [UserConfig(name: "GUEST", adminChannels: ["other"], disabled: true)]), to: store)
        let reapplied = try #require(try store.user(named: "GUEST"))
        #expect(reapplied.disabled && reapplied.adminChannels == ["other"] && reapplied.channelsFromGrants == ["granted"])
    }

    @Test("Passwords are required unless allow_empty_password")
    func emptyPasswords() throws {
        #expect {
            try loader.apply(config(users: [UserConfig(name: "user1")]), to: store)
        } throws: { error in
            (error as? GatewayError)?.field == "databases.todo.users.user1.password"
        }
        #expect(try store.user(named: "user1") == nil)

        try loader.apply(config(users: [UserConfig(name: "user1")], allowEmptyPassword: true), to: store)
        let auth = Authenticator(store: store, hasher: hasher)
        #expect(try auth.authenticate(basic: "user1", password: "").name == "user1")
    }

    @Test("The admin API's password rule holds in the configuration file too: a 1–2 character password is refused")
    func shortPasswords() throws {
        for password in ["a", "ab"] {
            #expect {
                try loader.apply(config(users: [UserConfig(name: "user1", password: password)]), to: store)
            } throws: { error in
                let error = error as? GatewayError
                return error?.field == "databases.todo.users.user1.password"
                    && error?.reason.contains("Passwords must be at least three 3 characters") == true
            }
        }
        #expect(try store.user(named: "user1") == nil)
        try loader.apply(config(users: [UserConfig(name: "user1", password: "abc")]), to: store)
        #expect(try store.user(named: "user1") != nil)
    }

    @Test("Invalid names and channels are configuration errors naming the field")
    func invalid() {
        #expect {
            try loader.apply(config(users: [UserConfig(name: "bad name", password: "pass")]), to: store)
        } throws: { error in
            (error as? GatewayError)?.field == "databases.todo.users.bad name"
        }
        #expect {
            try loader.apply(config(roles: [RoleConfig(name: "r", adminChannels: ["a,b"])]), to: store)
        } throws: { error in
            (error as? GatewayError)?.field == "databases.todo.roles.r.admin_channels"
        }
    }
}
