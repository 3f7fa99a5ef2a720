import ArgumentParser
import Couchette
import Foundation
import Synchronization

// MARK: - DatabaseOptions

/// The options every database command takes: the database file, whether it may be changed (`--writeable`, as in
/// cblite), its key, the collection, and `--json` output.
///
/// The database is named by its folder, `…/todo.couchette` (the `.couchette` suffix may be left out).
struct DatabaseOptions: ParsableArguments {
    @Argument(help: "The database, e.g. todo.couchette.")
    var database: String

    @Flag(name: [.short, .long], help: "Allow changes to the database (needed by every command that writes).")
    var writeable = false

    @Flag(help: "The database is encrypted: ask for its password (or give --password-file / --key-hex).")
    var encrypted = false

    @Option(help: "Read the database password from this file (its first line).")
    var passwordFile: String?

    @Option(help: "The database's raw 32-byte key, as 64 hex digits.")
    var keyHex: String?

    @Option(help: "The collection, SCOPE.NAME or NAME (default: the default collection).")
    var collection: String?

    @Flag(help: "Write JSON, for scripts.")
    var json = false

    @Flag(help: "Upgrade a database written by an older Couchette to this version's format (older ones cannot open it then).")
    var upgrade = false

    /// The folder and name ``Database`` opens.
    var location: (directory: String, name: String) {
        let url = URL(fileURLWithPath: database)
        let name = url.pathExtension == "couchette" ? url.deletingPathExtension().lastPathComponent : url.lastPathComponent
        return (url.deletingLastPathComponent().path, name)
    }

    /// Opens the database; it must exist (a command never creates one by accident).
    ///
    /// - Parameter writing: Whether the command writes; then `--writeable` is required.
    func open(writing: Bool = false, configure: (inout DatabaseConfiguration) -> Void = { _ in }) throws -> Database {
        if writing && !writeable {
            throw CLIError.usage("This command changes the database: add --writeable (-w).")
        }
        let (directory, name) = location
        guard FileManager.default.fileExists(atPath: "\(directory)/\(name).couchette") else {
            throw CLIError.notFound("No database at \(directory)/\(name).couchette")
        }
        var config = DatabaseConfiguration()
        config.directory = directory
        config.encryptionKey = try encryptionKey()
        config.upgradesFormat = upgrade
        configure(&config)
        do {
            return try Database(name: name, config: config)
        } catch let error as CouchetteError where error.code == .wrongEncryptionKey || error.code == .unauthorized {
            throw CLIError.wrongKey(
                encrypted || passwordFile != nil || keyHex != nil
                    ? "The key does not open \(database)." : "\(database) is encrypted: give --encrypted, --password-file or --key-hex.")
        }
    }

    /// Opens the database for writing, creating it (and the collection) when missing unless `mustExist`: the
    /// destination of `cp`, `pull` and `sync`, as in cblite, which need no `--writeable` (writing is what they are
    /// for).
    ///
    /// - Throws: ``CLIError/notFound(_:)`` when it is missing and `mustExist` (`-x/--existing`).
    func openOrCreate(mustExist: Bool = false) throws -> Database {
        var options = self
        options.writeable = true
        let (directory, name) = location
        guard !FileManager.default.fileExists(atPath: "\(directory)/\(name).couchette") else {
            return try options.open(writing: true)
        }
        if mustExist { throw CLIError.notFound("No database at \(directory)/\(name).couchette") }
        var config = DatabaseConfiguration()
        config.directory = directory
        config.encryptionKey = try encryptionKey()
        let database = try Database(name: name, config: config)
        if let collection {
            let (scope, name) = Self.scopeAndName(collection)
            _ = try database.createCollection(name: name, scope: scope)
        }
        return database
    }

    /// The collection the command works on.
    func collection(in database: Database) throws -> Collection {
        guard let collection else { return try database.defaultCollection() }
        let (scope, name) = Self.scopeAndName(collection)
        guard let found = try database.collection(name: name, scope: scope) else {
            throw CLIError.notFound("No collection \(scope).\(name)")
        }
        return found
    }

    /// `SCOPE.NAME`, or `NAME` in the default scope.
    static func scopeAndName(_ text: String) -> (scope: String, name: String) {
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        return parts.count == 2 ? (parts[0], parts[1]) : (Database.defaultScopeName, parts.first ?? "")
    }

    /// The key the shell asked for once, used by every command it runs.
    static let sessionKey = Mutex<EncryptionKey?>(nil)

    /// The key from the options: a hex key, a password file, or (with `--encrypted`) a password asked for; in the
    /// shell, the session's.
    func encryptionKey() throws -> EncryptionKey? {
        if let key = Self.sessionKey.withLock({ $0 }) { return key }
        if keyHex == nil && passwordFile == nil && !encrypted { return nil }
        return try Self.key(hex: keyHex, passwordFile: passwordFile, flag: "--key-hex") {
            guard let password = PasswordPrompt.read("Password for \(database): ") else {
                throw CLIError.usage("No password given.")
            }
            return password
        }
    }

    /// A key given as 64 hex digits, or a password read from a file (its first line), or else from `prompt`.
    static func key(hex: String?, passwordFile: String?, flag: String, prompt: () throws -> String) throws -> EncryptionKey {
        if let hex {
            guard hex.count == 64, let data = Data(hexString: hex) else {
                throw CLIError.usage("\(flag) takes 64 hex digits (32 bytes).")
            }
            return .key(data)
        }
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw CLIError.notFound("Cannot read \(passwordFile)")
            }
            return .password(String(text.split(whereSeparator: \.isNewline).first ?? ""))
        }
        return .password(try prompt())
    }
}

extension Data {
    /// Bytes from hex digits, nil when the text is not an even number of hex digits.
    init?(hexString text: String) {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let h = Self.nibble(high), let l = Self.nibble(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        self.init(bytes)
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
