import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionSeedsValidationTests

/// The "Adding Security" lesson's validation, routing and grants step (seed 001), whose function calls
/// `console.log`: the tutorial's two lists are saved with exactly the revision IDs it shows.
@Suite("Sync function: the lesson's validation step over HTTP")
struct SyncFunctionSeedsValidationTests {
    typealias Seeds = SyncFunctionSeedsTests

    static let validationRoutingGrants = """
        function(doc, oldDoc){
          /* Validate */
          // Document type is required and immutable.
          if (!doc.type || (oldDoc && doc.type != oldDoc.type)) {
          	throw({forbidden: "type property missing"});
          }
          if (doc.type == "task-list") {
            /* Control Write Access */
            if (!oldDoc) {
              try {
                requireUser(doc.owner);
              } catch (e) {
                requireRole("moderator");
              }
            }
            /* Validate */
            if (!doc._deleted) {
              // Validate required fields.
              validateNotEmpty("name", doc.name);
              validateNotEmpty("owner", doc.owner);
              // Validate that the _id is prefixed with the owner.
              validatePrefix("_id", doc._id, "owner");
              // Don't allow task-list ownership to be changed.
              validateReadOnly("owner", doc, oldDoc);
            }
            /* Route */
            channel("task-list." + doc._id);
            channel("moderators");
            /* Grant Read Access */
            access(doc.owner, "task-list." + doc._id);
            access(doc.owner, "task-list." + doc._id + ".users");
          }

          function validateNotEmpty(key, value) {
            if (!value) {
              throw({forbidden: key + " is not provided."});
            }
          }

          function validatePrefix(key, value, prefix) {
            console.log(value.split("."))
            if (value.split(".").length != 2) {
              throw({forbidden: key + " should be of the form {" + prefix + "}.{...}"});
            }
          }

          function validateReadOnly(key, doc, oldDoc) {
            if (oldDoc) {
              if (doc[key] != oldDoc[key]) {
                throw({forbidden: key + " is immutable."});
              }
            }
          }
        }
        """

    @Test("Both of the tutorial's lists are saved with its revision IDs; a bad _id is refused")
    func validationRoutingAndGrants() async throws {
        try await AdminGatewayFixture.run(Seeds.config) { client, ports, _ in
            try await Seeds.deploy(Self.validationRoutingGrants, client, ports)
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
