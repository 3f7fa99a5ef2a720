import CouchetteCore
import Foundation

/// The checks every document write goes through (gateway-rest-api.md §1.5).
enum DocumentValidation {
    /// Top-level `_` properties a document body may carry.
    static let allowedSpecialKeys: Set<String> = ["_id", "_rev", "_deleted", "_attachments", "_revisions", "_exp"]

    /// Non-empty, at most 250 bytes, not starting with `_`.
    static func checkDocumentID(_ id: String) throws(GatewayError) {
        guard !id.isEmpty, id.utf8.count <= 250, !id.hasPrefix("_") else { throw .badRequest("Invalid doc ID") }
    }

    /// The body must be an object whose `_` keys are the allowed ones.
    static func checkBody(_ body: JSONValue) throws(GatewayError) -> [String: JSONValue] {
        guard case .object(let members) = body else { throw .badRequest("Document body must be a JSON object") }
        if members.keys.contains(where: { $0.hasPrefix("_") && !allowedSpecialKeys.contains($0) }) {
            throw .badRequest("user defined top level properties beginning with '_' are not allowed in document body")
        }
        if let rev = members["_rev"], rev.stringValue == nil { throw .badRequest("Invalid revision ID") }
        if let attachments = members["_attachments"]?.objectValue {
            for name in attachments.keys where !isValidAttachmentName(name) {
                throw .badRequest("Invalid attachment name")
            }
        }
        return members
    }

    /// An attachment name: not empty, without NUL or other control characters.
    static func isValidAttachmentName(_ name: String) -> Bool {
        !name.isEmpty && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The stored body: the user properties and `_attachments`, without the other metadata keys.
    static func storedBody(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.filter { !$0.key.hasPrefix("_") || $0.key == "_attachments" })
    }

    static func parseRevision(_ text: String) throws(GatewayError) -> RevisionID {
        do { return try RevisionID(parsing: text) } catch { throw .badRequest("Invalid revision ID") }
    }

    /// The document's `_exp`, read as the sync function's `expiry()` reads its value (``SyncExpiry``): seconds from
    /// now up to 30 days, a Unix time beyond, an RFC 3339 date-time, or `0` for none. Nil when the body has none.
    ///
    /// - Throws: 400 `Invalid _exp` for any other value.
    static func expiry(_ members: [String: JSONValue], now: Date) throws(GatewayError) -> SyncExpiry? {
        guard let value = members["_exp"], value != .null else { return nil }
        guard let expiry = SyncExpiry(value, now: now) else { throw .badRequest("Invalid _exp") }
        return expiry
    }
}
