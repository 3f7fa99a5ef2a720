import CouchetteCore
import Testing

// MARK: - Document setups

extension HTTPTestClient {
    /// Stores revisions made elsewhere (`PUT ?new_edits=false`) one after the other, each expected to be accepted:
    /// how the CouchDB-fidelity tests make conflicts and tombstoned branches.
    func putRevisions(_ bodies: [JSONValue], id: String, database: String = "db", port: Int) async throws {
        for body in bodies {
            let reply = try await send("PUT", port: port, path: "/\(database)/\(id)?new_edits=false", json: body)
            #expect(reply.status == 201, "\(reply.text)")
        }
    }

    /// Creates a document holding one attachment `a.txt` (`text/plain`, `hello`) sent inline.
    func putTextAttachment(id: String, database: String = "db", port: Int) async throws {
        let reply = try await send(
            "PUT", port: port, path: "/\(database)/\(id)",
            json: ["_attachments": ["a.txt": ["content_type": "text/plain", "data": "aGVsbG8="]]])
        #expect(reply.status == 201, "\(reply.text)")
    }
}
