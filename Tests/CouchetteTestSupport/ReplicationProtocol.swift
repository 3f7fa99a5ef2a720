import Foundation

// MARK: - ReplicationProtocol

/// The two protocols the Lite replicator speaks with a gateway or a listener, chosen by the endpoint URL's scheme:
/// the CouchDB REST protocol (`http`) and Couchbase Lite's BLIP protocol (`ws`). Replication tests run with both and
/// make the same assertions.
public enum ReplicationProtocol: String, CaseIterable, Sendable {
    case rest, blip

    /// The URL of database `database` at `127.0.0.1:port`, TLS when `secure`.
    public func url(port: some BinaryInteger, database: String = "todo", secure: Bool = false) -> URL {
        let scheme =
            switch self {
            case .rest: secure ? "https" : "http"
            case .blip: secure ? "wss" : "ws"
            }
        return URL(string: "\(scheme)://127.0.0.1:\(port)/\(database)")!
    }

    /// `url` with this protocol's scheme (`http(s)` or `ws(s)`), the rest kept.
    public func url(_ url: URL) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let secure = ["https", "wss"].contains(url.scheme ?? "")
        components.scheme =
            switch self {
            case .rest: secure ? "https" : "http"
            case .blip: secure ? "wss" : "ws"
            }
        return components.url!
    }

    /// How test names show it.
    public var name: String { rawValue.uppercased() }
}
