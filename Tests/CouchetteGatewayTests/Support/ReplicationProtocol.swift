import Foundation
import Testing

// MARK: - ReplicationProtocol

/// The two protocols the Lite replicator speaks with a gateway, chosen by the endpoint URL's scheme: the CouchDB
/// REST protocol (`http`) and Couchbase Lite's BLIP protocol (`ws`). Gateway-replication tests run with both and make
/// the same assertions.
enum ReplicationProtocol: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case rest, blip

    /// The URL of database `database` at `127.0.0.1:port`, TLS when `secure`.
    func url(port: some BinaryInteger, database: String = "todo", secure: Bool = false) -> URL {
        let scheme =
            switch self {
            case .rest: secure ? "https" : "http"
            case .blip: secure ? "wss" : "ws"
            }
        return URL(string: "\(scheme)://127.0.0.1:\(port)/\(database)")!
    }

    var testDescription: String { rawValue.uppercased() }
}
