// MARK: - SeedSyncFunctions

/// The seeds' sync functions, stage by stage, as the tutorial shows them (`/shared/seeds/001_…`): each test that
/// replays a stage deploys one of these.
enum SeedSyncFunctions {
    /// Lesson 001, first step: a `type` is required and immutable.
    static let typeRequired = """
        function(doc, oldDoc){
          /* Validate */
          // Document type is required and immutable.
          if (!doc.type || (oldDoc && doc.type != oldDoc.type)) {
          	throw({forbidden: "type property missing"});
          }
        }
        """

    /// Lesson 001, write permissions: owners create their lists, moderators anybody's.
    static let writePermissions = """
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
                // Users can create/update lists for themselves.
                requireUser(doc.owner);
              } catch (e) {
                // Moderators can create/update lists for other users.
                requireRole("moderator");
              }
            }
          }
        }
        """

    /// Seed 001's function after its Validation, Routing and Grants steps.
    static let validationRoutingGrants = #"""
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
                // Users can create/update lists for themselves.
                requireUser(doc.owner);
              } catch (e) {
                // Moderators can create/update lists for other users.
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
            // Add doc to task-list's channel.
            channel("task-list." + doc._id);
            channel("moderators");

            /* Grant Read Access */
            // Grant task-list owner access to the task-list, its tasks, and its users.
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
        """#

}
