/// The one error type of `CouchetteCore`: bad JSON, a malformed revision ID or history, bad attachment metadata, a
/// malformed multipart body, an edit that conflicts with a revision tree, or a JSON delta that does not apply.
///
/// Every code carries the HTTP status the gateway and the Lite API report for it, so a caller can forward
/// the error without translating it:
///
/// ```swift
/// do { _ = try RevisionID(parsing: "abc") }
/// catch let error as CoreError { print(error.status, error.message) }   // 400 Invalid revision ID "abc"
/// ```
public struct CoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable {
        /// The input is not well-formed JSON (400).
        case invalidJSON
        /// An integer literal does not fit in 64 bits; it is rejected rather than rounded (400).
        case numberOutOfRange
        /// Arrays and objects are nested deeper than the parser's limit (400).
        case nestingTooDeep
        /// A revision ID is not `generation-digest` with a generation of at least 1 (400).
        case invalidRevisionID
        /// A `_revisions` object or a revision history is malformed or has gaps (400).
        case invalidRevisionHistory
        /// Attachment metadata is malformed (400).
        case invalidAttachment
        /// A multipart body is malformed or its `Content-Type` lacks a boundary (400).
        case invalidMultipart
        /// An edit does not apply to the revision tree: stale parent or existing document (409).
        case conflict
        /// A JSON delta is malformed or does not apply to the value it is given (400).
        case invalidDelta
    }

    /// What went wrong.
    public let code: Code
    /// A message for people; it never contains document bodies.
    public let message: String
    /// For JSON errors, the byte offset in the input where parsing failed.
    public let byteOffset: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, byteOffset: Int? = nil) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
    }

    /// The HTTP status for this error.
    public var status: Int {
        switch code {
        case .conflict: 409
        case .invalidJSON, .numberOutOfRange, .nestingTooDeep, .invalidRevisionID, .invalidRevisionHistory,
            .invalidAttachment, .invalidMultipart, .invalidDelta:
            400
        }
    }

    public var description: String { "\(message) (\(status))" }
}
