import CouchetteCore

// MARK: - SubChangesRequest

/// A `subChanges` message (spec: blip-sync-protocol.md §3.3): the subscription a puller asks for.
///
/// ```swift
/// let subscription = try SubChangesRequest(request)   // on the side feeding changes
/// subscription.since                                   // "12" (the JSON text's value), nil from the start
/// ```
public struct SubChangesRequest: Sendable, Hashable {
    /// The sequence to start after, as the feeding side wrote it (a number's digits, or a string's value); nil or
    /// empty from the start.
    public var since: String?
    /// Whether the feed goes on once caught up.
    public var continuous: Bool
    /// Whether deletions are left out until caught up (LiteCore asks when pulling into an empty database).
    public var activeOnly: Bool
    /// The most entries in one `changes` message (1 to ``maximumBatch``).
    public var batchSize: Int
    /// Whether every leaf of a conflicted document is offered (`style: all_docs`, what Couchette's replicator asks
    /// for), rather than its current revision only (Sync Gateway's answer to a client that keeps no conflicts).
    public var allLeaves: Bool
    /// The filter's name (`sync_gateway/bychannel`), when one is asked for.
    public var filter: String?
    /// The filter's `channels`, comma-separated.
    public var channels: String?
    /// The documents the feed is narrowed to (the body's `docIDs`).
    public var documentIDs: [String]?
    /// Whether the subscriber takes revocation entries (Couchbase Lite 3).
    public var revocations: Bool
    /// The versioning asked for (`rev-trees` when absent).
    public var versioning: String

    /// The largest `batch` honoured.
    public static let maximumBatch = 1_000
    /// The batch size when none is asked for.
    public static let defaultBatch = 200

    /// A request.
    public init(
        since: String? = nil, continuous: Bool = false, activeOnly: Bool = false,
        batchSize: Int = SubChangesRequest.defaultBatch, allLeaves: Bool = false, filter: String? = nil,
        channels: String? = nil, documentIDs: [String]? = nil, revocations: Bool = false,
        versioning: String = "rev-trees"
    ) {
        self.since = since
        self.continuous = continuous
        self.activeOnly = activeOnly
        self.batchSize = batchSize
        self.allLeaves = allLeaves
        self.filter = filter
        self.channels = channels
        self.documentIDs = documentIDs
        self.revocations = revocations
        self.versioning = versioning
    }

    /// The subscription `request` asks for (`since` is JSON text: a number, or a string with its quotes).
    public init(_ request: BLIPMessage) {
        let properties = request.properties
        var documentIDs: [String]?
        if let body = try? JSONValue(parsing: request.body), case .array(let ids)? = body["docIDs"] {
            documentIDs = ids.compactMap(\.stringValue)
        }
        self.init(
            since: properties["since"].flatMap { text in
                guard !text.isEmpty else { return nil }
                guard let value = try? JSONValue(parsing: Array(text.utf8)) else { return text }
                return value.intValue.map(String.init) ?? value.stringValue ?? text
            },
            continuous: properties.flag("continuous"), activeOnly: properties.flag("activeOnly"),
            batchSize: properties["batch"].flatMap { Int($0) }.map { min(max($0, 1), Self.maximumBatch) }
                ?? Self.defaultBatch,
            allLeaves: properties["style"] == "all_docs", filter: properties["filter"],
            channels: properties["channels"], documentIDs: documentIDs, revocations: properties.flag("revocations"),
            versioning: properties["versioning"] ?? "rev-trees")
    }

    /// The request's properties (`since` as JSON text: digits as a number, anything else as a string) and body.
    public var message: (properties: BLIPProperties, body: [UInt8]) {
        var properties: BLIPProperties = ["Profile": "subChanges", "batch": String(batchSize)]
        if revocations { properties["revocations"] = "true" }
        if allLeaves { properties["style"] = "all_docs" }
        if let since, !since.isEmpty {
            properties["since"] = since.utf8.allSatisfy { (0x30...0x39).contains($0) } ? since : JSONValue.string(since).serializedString()
        }
        if continuous { properties["continuous"] = "true" }
        if activeOnly { properties["activeOnly"] = "true" }
        if let filter { properties["filter"] = filter }
        if let channels { properties["channels"] = channels }
        if versioning != "rev-trees" { properties["versioning"] = versioning }
        let body = documentIDs.map { JSONValue.object(["docIDs": .array($0.map(JSONValue.string))]).serialized() }
        return (properties, body ?? [])
    }

    /// What the log says of it: `since 12 (continuous, activeOnly)`.
    public var summary: String {
        let flags = [continuous ? "continuous" : nil, activeOnly ? "activeOnly" : nil].compactMap(\.self)
        return "since \(JSONValue.string(since ?? "0").serializedString())"
            + (flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")
    }
}
