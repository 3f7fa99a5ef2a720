import CouchetteCore

// MARK: - ChangesRow

/// One entry of a `_changes` feed, ready to send (spec: gateway-rest-api.md §11.2 point 3).
///
/// ```swift
/// row.json.serializedString()
/// // {"changes":[{"rev":"2-b"}],"deleted":true,"id":"doc1","seq":4}
/// ```
public struct ChangesRow: Sendable, Hashable {
    /// The entry's sequence.
    public var sequence: UInt64

    /// The entry: `seq`, `id`, `changes`, and `deleted`, `removed`, `doc` when they apply.
    public var json: JSONValue

    /// Creates a row.
    public init(sequence: UInt64, json: JSONValue) {
        self.sequence = sequence
        self.json = json
    }
}
