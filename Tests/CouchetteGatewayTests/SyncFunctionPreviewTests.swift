import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - SyncFunctionPreviewTests

/// ``JavaScriptSyncFunction/preview(document:oldDocument:user:)``, the Admin UI's Live Preview.
@Suite(.timeLimit(.minutes(5))) struct SyncFunctionPreviewTests {
    @Test func anAcceptedDocumentShowsItsChannelsAndGrants() throws {
        let sync = try JavaScriptSyncFunction.body(
            #"channel("b", "a"); access("user1", ["b", "a"]); role("user1", "role:moderator"); expiry(1893456000);"#)
        let preview = sync.preview(document: ["_id": "doc"], oldDocument: nil, user: nil)
        #expect(
            preview
                == .accepted(
                    RoutingResult(
                        channels: ["a", "b"], access: ["user1": ["a", "b"]], roles: ["user1": ["moderator"]],
                        expiry: Date(timeIntervalSince1970: 1_893_456_000))))
        #expect(
            preview.json.serializedString()
                == #"{"access":{"user1":["a","b"]},"channels":["a","b"],"expiry":"2030-01-01T00:00:00Z","roles":{"user1":["moderator"]}}"#
        )
    }

    @Test func aRejectionShowsItsStatusAndReason() throws {
        let sync = try JavaScriptSyncFunction.body(#"requireUser(doc.owner);"#)
        let user = SyncUserContext(name: "user1", roles: [], channels: ["!"])
        let preview = sync.preview(document: ["_id": "doc", "owner": "user2"], oldDocument: nil, user: user)
        #expect(preview == .rejected(status: 403, reason: "wrong user", detail: nil))
        #expect(preview.json == ["status": 403, "reason": "wrong user"])
        #expect(sync.preview(document: ["_id": "doc", "owner": "user2"], oldDocument: nil, user: nil).json["channels"] == [])
    }

    @Test func aFailureKeepsItsDetailOutOfTheJSON() throws {
        let sync = try JavaScriptSyncFunction.body("doc.missing.field;")
        let preview = sync.preview(document: ["_id": "doc"], oldDocument: nil, user: nil)
        guard case .rejected(500, "Exception in JS sync function", let detail?) = preview else {
            Issue.record("unexpected \(preview)")
            return
        }
        #expect(detail.hasPrefix("TypeError") && detail.hasSuffix("(line 2)"), "\(detail)")
        #expect(preview.json == ["status": 500, "reason": "Exception in JS sync function"])
    }
}
