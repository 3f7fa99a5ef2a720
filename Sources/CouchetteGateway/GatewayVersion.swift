// MARK: - GatewayVersion

/// Product name and version strings the gateway reports to clients.
///
/// Couchbase Lite 1.x clients string-compare the text after the slash of the `Server` header to enable features
/// (`_bulk_get`, websocket `_changes`, gzip bodies, POST `_changes`), so the header starts with
/// `Couchbase Sync Gateway/1.4.1` (spec: gateway-rest-api.md §1.5, §3).
///
/// ```swift
/// GatewayVersion.serverHeader // "Couchbase Sync Gateway/1.4.1 Couchette/0.1"
/// ```
public enum GatewayVersion {
    /// The product name, `"Couchette Sync Gateway"`.
    public static let productName = "Couchette Sync Gateway"

    /// The Couchette version, `"0.1"`.
    public static let version = "0.1"

    /// The Sync Gateway version this gateway is compatible with, `"1.4.1"`.
    public static let compatibleSyncGatewayVersion = "1.4.1"

    /// The value of the `Server` header sent with every response.
    public static let serverHeader = "Couchbase Sync Gateway/\(compatibleSyncGatewayVersion) Couchette/\(version)"

    /// The `version` string of the welcome document served at `GET /`.
    public static let versionString =
        "\(productName)/\(version) (compatible; Couchbase Sync Gateway/\(compatibleSyncGatewayVersion))"
}
