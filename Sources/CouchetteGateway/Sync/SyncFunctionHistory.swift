import CouchetteCore
import Foundation

// MARK: - SyncFunctionHistory

/// The sync functions deployed to a database, newest first, each with its version and when it was deployed: what
/// the Admin UI lists and rolls back to (`GET /{db}/_config/sync/history`). Kept in the database's storage (every
/// node sees it), at most ``limit`` versions.
///
/// ```swift
/// var history = SyncFunctionHistory()
/// history.record("function(doc){channel(doc.type);}", at: Date())
/// history.versions.first?.version  // 1
/// ```
public struct SyncFunctionHistory: Sendable, Equatable {
    /// One deployed function.
    public struct Version: Sendable, Equatable {
        /// 1 for the first deployed, then one more each time.
        public var version: Int
        /// The source; nil for the default function.
        public var source: String?
        /// When it was deployed.
        public var deployed: Date
    }

    /// The versions, newest first.
    public private(set) var versions: [Version] = []

    /// The most versions kept.
    public static let limit = 50

    /// The key the history is stored under (``GatewayStorage/storedValue(_:)``).
    static let storageKey = "sync_history"

    /// An empty history.
    public init() {}

    /// Records a deployed function as the newest version (nothing when it is the newest already).
    public mutating func record(_ source: String?, at date: Date) {
        if let newest = versions.first, newest.source == source { return }
        versions.insert(Version(version: (versions.first?.version ?? 0) + 1, source: source, deployed: date), at: 0)
        if versions.count > Self.limit { versions.removeLast(versions.count - Self.limit) }
    }

    /// `{"versions": [{"version", "sync" (null for the default), "deployed" (RFC 3339)}]}`, newest first.
    public var json: JSONValue {
        ["versions": .array(versions.map { version in
            [
                "version": .int(Int64(version.version)), "sync": version.source.map(JSONValue.string) ?? .null,
                "deployed": .string(version.deployed.formatted(Date.ISO8601FormatStyle())),
            ]
        })]
    }

    /// Reads a history from its ``json``.
    init(json: JSONValue) {
        versions = (json["versions"]?.arrayValue ?? []).compactMap { entry in
            guard let number = entry["version"]?.intValue, let text = entry["deployed"]?.stringValue,
                let date = try? Date(text, strategy: Date.ISO8601FormatStyle())
            else { return nil }
            return Version(version: Int(number), source: entry["sync"]?.stringValue, deployed: date)
        }
    }
}
