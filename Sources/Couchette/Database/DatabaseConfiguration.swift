import Foundation

/// Options for opening a database; copied when the database opens.
///
/// ```swift
/// var config = DatabaseConfiguration()
/// config.directory = "/var/lib/todo"
/// let db = try Database(name: "todo", config: config)
/// ```
public struct DatabaseConfiguration: Sendable {
    /// The folder that holds `NAME.couchette/` folders; ``defaultDirectory`` unless set.
    public var directory: String
    /// Sync every commit to disk (`PRAGMA synchronous=FULL`) instead of the WAL default (`NORMAL`).
    public var fullSync = false
    /// Whether SQLite may memory-map the file.
    public var mmapEnabled = true
    /// Open read-only: writes throw `.forbidden` (403).
    public var readOnly = false
    /// Create the database if it does not exist; when false a missing database throws `.notFound` (404).
    public var create = true
    /// Revisions kept per branch of a document's revision tree; older ones are pruned as documents are
    /// saved, and compaction drops the bodies of all but the leaves (1.x `maxRevTreeDepth`).
    public var maxRevTreeDepth: UInt32 = 20
    /// Whether opening a file written by an older Couchette upgrades it to this build's format (after which older
    /// builds cannot open it). Off, such a file is refused with `.unsupported` and left as it is.
    public var upgradesFormat = true
    /// Encrypts the database with this key (nil: a plain file). Opening an encrypted database with a wrong key or
    /// none, or a plain one with a key, throws `.wrongEncryptionKey` (401) and leaves the file as it was.
    public var encryptionKey: EncryptionKey?
    /// Supplies the key when the database opens (e.g. ``KeyStoreProvider``); set this or ``encryptionKey``, not
    /// both.
    public var encryptionKeyProvider: (any EncryptionKeyProvider)?

    /// The key to open with, from ``encryptionKey`` or ``encryptionKeyProvider``.
    ///
    /// - Throws: `.badInput` when both are set; what the provider throws (401 for a wrong password).
    func resolvedEncryptionKey() throws -> EncryptionKey? {
        guard let encryptionKeyProvider else { return encryptionKey }
        guard encryptionKey == nil else {
            throw CouchetteError(.badInput, message: "Set encryptionKey or encryptionKeyProvider, not both")
        }
        return try encryptionKeyProvider.encryptionKey()
    }

    /// A configuration with the defaults.
    public init() {
        directory = DatabaseConfiguration.defaultDirectory
    }

    /// A copy of `config`, or the defaults when it is nil.
    public init(config: DatabaseConfiguration?) {
        self = config ?? DatabaseConfiguration()
    }

    /// Where databases live unless a configuration says otherwise: `$XDG_DATA_HOME/Couchette` on Linux
    /// (`~/.local/share/Couchette` when `XDG_DATA_HOME` is not set), Application Support elsewhere.
    public static var defaultDirectory: String {
        #if os(Linux)
            if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !xdg.isEmpty {
                return (xdg as NSString).appendingPathComponent("Couchette")
            }
            return (NSHomeDirectory() as NSString).appendingPathComponent(".local/share/Couchette")
        #else
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first!
            return base.appendingPathComponent("Couchette").path
        #endif
    }
}

extension DatabaseConfiguration {
    /// The storage's options for this configuration with `key` (already resolved from a key or a provider).
    ///
    /// - Throws: `.badInput` for a malformed key.
    func storageOptions(key: EncryptionKey?) throws -> StorageOptions {
        StorageOptions(
            readOnly: readOnly, create: create, fullSync: fullSync, mmapEnabled: mmapEnabled,
            upgradesFormat: upgradesFormat, key: try key?.connectionKey())
    }
}
