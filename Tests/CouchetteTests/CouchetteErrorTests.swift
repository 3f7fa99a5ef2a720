@testable import Couchette
import CouchetteSQLite
import CouchetteCore
import Testing

@Suite(.timeLimit(.minutes(5))) struct CouchetteErrorTests {
    @Test func codesCarryHTTPStatusesAndCouchDBNames() {
        #expect(CouchetteError(.notFound, message: "missing").status == 404)
        #expect(CouchetteError(.notFound, message: "missing").errorName == "not_found")
        #expect(CouchetteError(.wrongEncryptionKey, message: "wrong key").status == 401)
        #expect(CouchetteError(.wrongEncryptionKey, message: "wrong key").errorName == "unauthorized")
        #expect(CouchetteError(.conflict, message: "stale").errorName == "conflict")
        #expect(CouchetteError(.network, message: "gateway said", status: 503).status == 503)
    }

    @Test func catchesByCode() {
        func failing() throws { throw CouchetteError(.conflict, message: "Document revision conflict") }
        var caught = false
        do {
            try failing()
        } catch CouchetteError.Code.conflict {
            caught = true
        } catch {}
        #expect(caught)
    }

    @Test func wrapsCoreErrors() {
        do {
            _ = try RevisionID(parsing: "nope")
            Issue.record("expected an error")
        } catch {
            let wrapped = CouchetteError(error)
            #expect(wrapped.code == .badInput)
            #expect(wrapped.status == 400)
            #expect(wrapped.message.contains("nope"))
        }
        var tree = RevisionTree()
        let conflict = #expect(throws: CoreError.self) {
            try tree.addLocalEdit(parent: RevisionID(parsing: "1-a"), body: [:], deleted: false)
        }
        #expect(conflict.map { CouchetteError($0).code } == .conflict)
        #expect(conflict.map { CouchetteError($0).status } == 409)
    }

    @Test func reexportsTheCoreValueTypes() throws {
        let body: JSONValue = ["type": "task-list"]
        #expect(body.serializedString() == #"{"type":"task-list"}"#)
        #expect(!Database.version.isEmpty)
    }
}

@Suite(.timeLimit(.minutes(5))) struct TypedThrowsAcrossModulesTests {
    @Test func parseErrorsAreCaughtAsCoreErrors() {
        do {
            _ = try JSONValue(parsing: Array("[1,".utf8))
            Issue.record("expected an error")
        } catch {
            #expect(CouchetteError(error).status == 400)
        }
        do {
            _ = try JSONValue(parsing: "[1,")
            Issue.record("expected an error")
        } catch {
            #expect(error.byteOffset == 3)
        }
        do {
            _ = try RevisionHistory(json: ["start": 1, "ids": ["b", "a"]])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidRevisionHistory)
        }
    }
}

/// One mapping from SQLite failures to statuses: the library's errors carry the status the gateway answers with
/// (`SQLiteError.status`) for every primary result code.
@Suite(.timeLimit(.minutes(5))) struct SQLiteErrorMappingTests {
    @Test func everySQLiteFailureHasTheGatewaysStatus() {
        for code in Int32(1)...Int32(28) {
            let failure = SQLiteError(code: code, message: "failure \(code)")
            let translated = DatabaseStorage.translate(failure)
            #expect(translated.status == failure.status, "SQLite code \(code): \(translated)")
        }
        #expect(DatabaseStorage.translate(SQLiteError(.constraint)).code == .conflict)
        #expect(DatabaseStorage.translate(SQLiteError(.full)).status == 507)
        #expect(DatabaseStorage.translate(SQLiteError(.notADatabase)).code == .wrongEncryptionKey)
    }
}
