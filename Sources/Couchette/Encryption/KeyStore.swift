import Foundation

// MARK: - Key stores

/// Where ``KeyStoreProvider`` keeps wrapped data keys, by identifier.
public protocol KeyStore: Sendable {
    /// The key saved under `identifier`, or nil.
    func load(identifier: String) throws -> WrappedKey?
    /// Saves (replacing) the key under `identifier`.
    func save(_ key: WrappedKey, identifier: String) throws
    /// Deletes the key under `identifier`; nothing happens when there is none.
    func delete(identifier: String) throws
}

/// Wrapped keys as JSON files `<identifier>.key.json` in a folder, readable by their owner only (mode 0600),
/// replaced atomically and synced.
public struct FileKeyStore: KeyStore {
    /// The folder.
    public let directory: String

    /// A store in `directory` (created on the first save).
    public init(directory: String) {
        self.directory = directory
    }

    /// `keys/` in ``DatabaseConfiguration/defaultDirectory``.
    public static var `default`: FileKeyStore {
        FileKeyStore(directory: (DatabaseConfiguration.defaultDirectory as NSString).appendingPathComponent("keys"))
    }

    public func load(identifier: String) throws -> WrappedKey? {
        let path = try self.path(of: identifier)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(WrappedKey.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CouchetteError(.corrupt, message: "The key file of \"\(identifier)\" cannot be read: \(error)")
        }
    }

    public func save(_ key: WrappedKey, identifier: String) throws {
        let path = try self.path(of: identifier)
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let temporary = path + ".tmp"
            guard
                FileManager.default.createFile(
                    atPath: temporary, contents: try encoder.encode(key), attributes: [.posixPermissions: 0o600])
            else { throw CouchetteError(.io, message: "Cannot write \(temporary)") }
            // Synced before and after the rename: a key file lost or left empty by a crash would lock the data away.
            try FileIO.synchronizeFile(temporary)
            try FileIO.renameFile(temporary, to: path)
            FileIO.synchronizeDirectory(directory)
        } catch {
            throw CouchetteError(.io, message: "Cannot save the key of \"\(identifier)\": \(error)")
        }
    }

    public func delete(identifier: String) throws {
        let path = try self.path(of: identifier)
        guard FileManager.default.fileExists(atPath: path) else { return }
        do { try FileManager.default.removeItem(atPath: path) } catch {
            throw CouchetteError(.io, message: "Cannot delete the key of \"\(identifier)\": \(error)")
        }
    }

    /// The file of `identifier`, which must be a plain name.
    private func path(of identifier: String) throws(CouchetteError) -> String {
        guard !identifier.isEmpty, !identifier.contains("/"), !identifier.hasPrefix(".") else {
            throw CouchetteError(.badInput, message: "Key identifier \"\(identifier)\" is not a plain name")
        }
        return (directory as NSString).appendingPathComponent("\(identifier).key.json")
    }
}
