import CouchetteCore

// MARK: - AllDocsOptions

/// The options of `_all_docs` (spec: gateway-rest-api.md §7), read from a request's query by the HTTP layer.
struct AllDocsOptions: Sendable {
    var includeDocs: Bool
    var channels: Bool
    var access: Bool
    var revisions: Bool
    var conflicts: Bool
    var attachments: Bool
    var updateSequence: Bool
    var startKey: String?
    var endKey: String?
    var limit: Int?
    var skip: Int
    var key: String?
    var descending: Bool
    var inclusiveEnd: Bool
}
