import CouchetteCore
import CouchetteTestSupport
import Testing

@testable import CouchetteGateway

/// PostgreSQL reads a user's grants in two statements (the user's, then its roles' with theirs); they must give what
/// the computation from each grant read alone gives (``GatewayStorage/computeChannelGrantSequences(of:)``).
@Suite(.timeLimit(.minutes(3))) struct PostgresPrincipalGrantsTests {
    @Test("Grant sequences read in two statements, synchronously or awaited, agree with those read one grant at a time")
    func grantSequencesAgreeWithTheGrantsReadAlone() async throws {
        var config = DatabaseConfig(name: "db", server: try await StorageBackend.postgres.newLocation())
        config.sync = """
            function (doc) {
                channel(doc.channels);
                if (doc.to) access(doc.to, doc.channels);
                if (doc.roles) role(doc.user, doc.roles);
            }
            """
        let settings = config
        let (database, user) = try await offCooperativeThreads {
            let database = try GatewayDatabase(config: settings, startTime: 0)
            let storage = database.storage
            try storage.putRole(Role(name: "editor", adminChannels: ["e1"], sequence: 3))
            try storage.putRole(Role(name: "viewer", adminChannels: ["v1"]))
            try storage.putUser(User(name: "ann", adminChannels: ["a1"], adminRoles: ["viewer"]))
            try database.documents.put(id: "g1", body: ["channels": ["c1", "c2"], "to": "ann"])
            try database.documents.put(id: "g2", body: ["channels": ["r1", "r2"], "to": "role:editor"])
            // A role granted by a document, and one that does not exist.
            try database.documents.put(id: "g3", body: ["channels": [], "user": "ann", "roles": ["role:editor", "role:ghost"]])
            // Later grants of channels already granted: the earliest sequence counts.
            try database.documents.put(id: "g4", body: ["channels": ["c1"], "to": "ann"])
            try database.documents.put(id: "g5", body: ["channels": ["r1"], "to": "role:editor"])
            return (database, try #require(try storage.user(named: "ann")))
        }
        defer { database.close() }
        let storage = database.storage
        let expected = try await offCooperativeThreads { try storage.computeChannelGrantSequences(of: user) }
        #expect(Set(expected.keys) == ["!", "a1", "v1", "c1", "c2", "e1", "r1", "r2"])
        #expect(try await offCooperativeThreads { try storage.channelGrantSequences(of: user) } == expected)
        #expect(try await storage.fetchChannelGrantSequences(of: user) == expected)
    }
}
