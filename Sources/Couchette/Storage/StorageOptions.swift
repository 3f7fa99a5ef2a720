import CouchetteSQLite

/// How ``DatabaseStorage`` opens its file: what a database configuration and its resolved key come down to for
/// the storage, so that the storage depends on no configuration or key type of the layers above it.
struct StorageOptions: Sendable {
    var readOnly = false
    var create = true
    /// `PRAGMA synchronous = FULL` instead of `NORMAL`.
    var fullSync = false
    var mmapEnabled = true
    /// Whether a file of an older schema may be migrated (``Schema/migrate(_:upgrading:)``).
    var upgradesFormat = true
    /// The file's key (nil: a plain file).
    var key: Connection.EncryptionKey?
}
