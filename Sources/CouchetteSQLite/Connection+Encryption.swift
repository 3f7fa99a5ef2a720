import CCouchetteCipher
import CSQLite

// MARK: - Encryption

extension Connection {
    /// A key for a database encrypted in SQLCipher 4's default format (docs/decisions.md, "Encryption at rest"):
    /// AES-256-CBC pages with HMAC-SHA512, through the `couchette-cipher` VFS over the system SQLite.
    ///
    /// ```swift
    /// let connection = try Connection(path: path, options: .init(encryptionKey: .passphrase(Array("secret".utf8))))
    /// ```
    public enum EncryptionKey: Sendable, Hashable {
        /// A passphrase's bytes, stretched with PBKDF2-HMAC-SHA512 (256,000 rounds) and the file's salt.
        case passphrase([UInt8])
        /// A 32-byte AES key, used as it is.
        case raw([UInt8])
    }

    /// Opens `path` with the default VFS.
    static func openPlain(path: String, flags: Int32) -> (OpaquePointer?, Int32) {
        var pointer: OpaquePointer?
        let code = sqlite3_open_v2(path, &pointer, flags, nil)
        return (pointer, code)
    }

    /// Opens `path` through the cipher VFS with `key` (a URI naming a one-time token for the key, never the key).
    static func openEncrypted(path: String, flags: Int32, key: EncryptionKey) throws -> (OpaquePointer?, Int32) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw SQLiteError(.misuse, message: "Only a database file given by its path can be encrypted")
        }
        let token = try Self.stage(key)
        defer { cc_unstage_key(token) }
        var pointer: OpaquePointer?
        let code = sqlite3_open_v2(
            "\(Self.fileURI(path))?\(CC_URI_KEY_PARAM)=\(token)", &pointer, flags | SQLITE_OPEN_URI, CC_VFS_NAME)
        return (pointer, code)
    }

    /// Hands `key` to the cipher VFS; returns the one-time token that names it.
    private static func stage(_ key: EncryptionKey) throws -> String {
        _ = cc_register()
        let (kind, bytes): (cc_key_kind, [UInt8]) =
            switch key {
            case .passphrase(let bytes): (CC_KEY_PASSPHRASE, bytes)
            case .raw(let bytes): (CC_KEY_RAW, bytes)
            }
        var token = [CChar](repeating: 0, count: 33)
        let staged = bytes.withUnsafeBufferPointer { cc_stage_key(kind, $0.baseAddress, $0.count, &token) }
        guard staged == SQLITE_OK else {
            throw SQLiteError(code: staged, message: "The encryption key was refused (\(bytes.count) bytes)")
        }
        return String(decoding: token.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `file:` URI of a path; an absolute path gets an empty authority (`file:///…`), so that `//x` is never read
    /// as a host.
    private static func fileURI(_ path: String) -> String {
        "file:\(path.hasPrefix("/") ? "//" : "")\(Self.uriEscaped(path))"
    }

    /// Writes a compacted copy of the database to a new file at `path` (`VACUUM INTO`), encrypted with `key` or plain
    /// when nil, whatever this one is. SQLite does not sync the copy: the caller does.
    ///
    /// - Throws: ``SQLiteError``, e.g. when `path` exists.
    public func vacuum(into path: String, encryptionKey key: EncryptionKey?) throws {
        guard let key else {
            return try execute("VACUUM INTO ?", "\(Self.fileURI(path))?vfs=unix")
        }
        let token = try Self.stage(key)
        defer { cc_unstage_key(token) }
        // The copy takes the page size and reserved bytes this connection asks for: those of the format.
        try database.withOpenHandle { handle in
            try SQLiteError.check(cc_prepare_connection(handle, "main"), database: handle)
        }
        try execute("VACUUM INTO ?", "\(Self.fileURI(path))?vfs=\(CC_VFS_NAME)&\(CC_URI_KEY_PARAM)=\(token)")
    }

    /// The 32-byte AES page key of the main database (after PBKDF2 for a passphrase, the raw key otherwise), from
    /// which other keys of the same database derive; nil for a plain database. Call after the first write of a new
    /// file, when its salt is fixed.
    public func pageKey() throws -> [UInt8]? {
        try database.withOpenHandle { handle in
            var info = cc_key_info()
            defer { cc_zero(&info, MemoryLayout<cc_key_info>.size) }
            guard cc_key_info_of(handle, "main", &info) == SQLITE_OK else { return nil }
            return withUnsafeBytes(of: info.kenc) { Array($0) }
        }
    }

    /// Sets up a freshly opened encrypted connection (reserve bytes, page size, temporary data in memory).
    static func prepareEncrypted(_ pointer: OpaquePointer) throws {
        try SQLiteError.check(cc_prepare_connection(pointer, "main"), database: pointer)
    }

    /// A path as the path of a `file:` URI: `%`, `?` and `#` escaped.
    static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
