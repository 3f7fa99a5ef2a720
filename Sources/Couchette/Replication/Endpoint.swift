import Foundation

// MARK: - Endpoints

/// Where a ``Replicator`` replicates to and from.
public protocol Endpoint: Sendable {}

/// A remote database spoken to over the CouchDB replication protocol: a Couchette gateway, Sync Gateway or CouchDB
/// (`http(s)://host:port/db`).
public struct URLEndpoint: Endpoint {
    /// The database's URL.
    public let url: URL

    /// Creates an endpoint for the database at `url`.
    public init(url: URL) {
        self.url = url
    }
}

/// Another local database: replication between two databases in the same process, without HTTP.
public struct DatabaseEndpoint: Endpoint {
    /// The other database.
    public let database: Database

    /// Creates an endpoint for `database`.
    public init(database: Database) {
        self.database = database
    }
}
