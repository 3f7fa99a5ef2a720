import CouchetteCore
import Foundation

// MARK: - SyncPreview

/// The result of trying a sync function on a document without saving anything: the Admin UI's Live Preview
/// (seed 001, "Live Preview Mode").
///
/// ```swift
/// let preview = syncFunction.preview(document: doc, oldDocument: nil, user: nil)
/// preview.json  // {"channels":["task-list.user1.A"],"access":{"user1":["task-list.user1.A"]},"roles":{}}
/// ```
public enum SyncPreview: Sendable, Equatable {
    /// The function accepted the document.
    case accepted(RoutingResult)
    /// The function rejected the document or failed. `detail` explains a failure (an exception with its line, a
    /// time-out); it may quote document content, which is why ``json`` leaves it out.
    case rejected(status: Int, reason: String, detail: String?)

    /// The preview as JSON: `{"channels", "access", "roles", "expiry"?}` with sorted arrays when accepted,
    /// `{"status", "reason"}` when rejected.
    public var json: JSONValue {
        switch self {
        case .accepted(let result):
            return result.json
        case .rejected(let status, let reason, _):
            return ["status": .int(Int64(status)), "reason": .string(reason)]
        }
    }
}

// MARK: - Previewing

extension JavaScriptSyncFunction {
    /// Runs the function on a document as a write would, and reports what it decided instead of throwing.
    ///
    /// - Parameters:
    ///   - document: The document to try, with `_id`.
    ///   - oldDocument: Its parent revision, nil for a new document.
    ///   - user: The user to run as, nil for the admin (every `require*` passes).
    public func preview(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) -> SyncPreview {
        switch evaluate(document: document, oldDocument: oldDocument, user: user) {
        case .routed(let result): .accepted(result)
        case .rejected(let error): .rejected(status: error.statusCode, reason: error.reason, detail: nil)
        case .failed(let error, let detail): .rejected(status: error.statusCode, reason: error.reason, detail: detail)
        }
    }
}
