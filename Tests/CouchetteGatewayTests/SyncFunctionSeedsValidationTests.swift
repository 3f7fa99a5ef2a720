import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionSeedsValidationTests

/// The "Adding Security" lesson's validation, routing and grants step (seed 001), whose function calls
/// `console.log`: the tutorial's two lists are saved with exactly the revision IDs it shows.
@Suite("Sync function: the lesson's validation step over HTTP", .timeLimit(.minutes(5)))
struct SyncFunctionSeedsValidationTests {
    typealias Seeds = SyncFunctionSeedsTests

    @Test("Both of the tutorial's lists are saved with its revision IDs; a bad _id is refused")
    func validationRoutingAndGrants() async throws {
        try await AdminGatewayFixture.run(Seeds.config) { client, ports, _ in
            try await Seeds.deploy(SeedSyncFunctions.validationRoutingGrants, client, ports)
            let today = "user1.2F5FB3E4-CD95-49F7-B232-5836F5869BEA"
            let groceries = "user1.931645E7-84E0-46D1-82E0-0B39E5A70162"
            let results = try await Seeds.bulkDocs(
                [
                    ["_id": .string(today), "name": "Today", "type": "task-list", "owner": "user1"],
                    ["_id": .string(groceries), "name": "Groceries", "type": "task-list", "owner": "user1"],
                ], client, ports)
            #expect(
                results == [
                    ["id": .string(today), "rev": "1-477f7c4f36a31ce9e86a5f465b168b8a"],
                    ["id": .string(groceries), "rev": "1-7008921932d980b285d18c173e0dff1f"],
                ])
            let badPrefix = try await Seeds.bulkDocs(
                [["_id": "nodots", "name": "x", "type": "task-list", "owner": "user1"]], client, ports)
            #expect(badPrefix[0]["reason"] == "_id should be of the form {owner}.{...}")
        }
    }
}
