import CouchetteCore
import Foundation

// MARK: - CBLite

/// A genuine Couchbase Lite 3.0 client for interoperability tests: Couchbase's own `cblite` tool with LiteCore 3.0
/// linked in (`../shared/tools/cblite/cblite` beside the repository, or `COUCHETTE_CBLITE`), run as a child process
/// on databases in a folder of its own.
///
/// ```swift
/// let device = try CBLite.required().database()
/// try await device.pull(from: "ws://127.0.0.1:\(port)/todo", user: "alice:pass")
/// try await device.body("list1")   // {"_id":"list1", …}
/// ```
public struct CBLite: Sendable {
    /// The `cblite` executable.
    public let executable: URL

    /// The client when the binary is there, else nil.
    public static let shared: CBLite? = locate().map(CBLite.init(executable:))

    /// Whether the tests must have it: in CI (`CI=true`), whose machine has `../shared/`.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Why tests using it are skipped where it is absent.
    public static let absenceReason =
        "the genuine Couchbase Lite client ../shared/tools/cblite/cblite is not beside the repository (COUCHETTE_CBLITE)"

    /// The client, or a test failure naming what is missing.
    public static func required() throws -> CBLite {
        guard let shared else { throw ChildProcess.Failure(description: absenceReason) }
        return shared
    }

    private static func locate() -> URL? {
        let manager = FileManager.default
        if let given = ProcessInfo.processInfo.environment["COUCHETTE_CBLITE"], manager.isExecutableFile(atPath: given) {
            return URL(fileURLWithPath: given)
        }
        // The package's folder holds Package.swift; shared/ lies beside it.
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<8 {
            if manager.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                let candidate = folder.deletingLastPathComponent().appendingPathComponent("shared/tools/cblite/cblite")
                return manager.isExecutableFile(atPath: candidate.path) ? candidate : nil
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    /// A new, empty database folder (created by the first command that writes, as `cblite --create` does).
    public func database(named name: String = "device") throws -> Database {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cblite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return Database(client: self, path: folder.appendingPathComponent("\(name).cblite2").path, folder: folder)
    }

    /// Runs `cblite` with `arguments` until it exits; its standard output and error apart.
    public func run(_ arguments: [String], within limit: Duration = .seconds(120)) async throws -> Outcome {
        let child = try ChildProcess(executable, arguments, separateErrors: true)
        let status = try await child.waitForExit(within: limit)
        return Outcome(status: status, output: child.output, errors: child.errors)
    }

    /// Starts `cblite` with `arguments` (a continuous replication); the caller ends it.
    public func start(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(executable, arguments, separateErrors: true)
    }

    // MARK: - Outcome

    /// What one run printed and how it ended.
    public struct Outcome: Sendable, CustomStringConvertible {
        public let status: Int32
        public let output: String
        public let errors: String

        public var description: String { "exit \(status)\n\(output)\(errors)" }
    }

    // MARK: - Database

    /// One `cblite` database (a device).
    public struct Database: Sendable {
        public let client: CBLite
        /// The `.cblite2` folder.
        public let path: String
        /// The folder holding it, removed by ``remove()``.
        public let folder: URL

        /// Runs a subcommand on this database: `cblite [--create --writeable] SUBCOMMAND FLAGS… PATH REST…`;
        /// throws when it fails.
        @discardableResult
        public func command(
            _ subcommand: String, _ flags: [String] = [], _ rest: [String] = [], writing: Bool = false,
            within limit: Duration = .seconds(120)
        ) async throws -> String {
            let global = writing ? ["--create", "--writeable"] : []
            let outcome = try await client.run(global + [subcommand] + flags + [path] + rest, within: limit)
            guard outcome.status == 0 else {
                throw ChildProcess.Failure(description: "cblite \(subcommand) failed: \(outcome)")
            }
            return outcome.output
        }

        /// `cblite put`: creates or updates document `id` with `body`.
        public func put(_ id: String, _ body: JSONValue) async throws {
            try await command("put", [], [id, body.serializedString()], writing: true)
        }

        /// The current body of document `id` with `_id` and `_rev`, or nil when it is missing or deleted.
        public func body(_ id: String) async throws -> JSONValue? {
            let outcome = try await client.run(["cat", "--rev", "--raw", path, id])
            let text = outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
            guard outcome.status == 0, !text.isEmpty else { return nil }
            return try JSONValue(parsing: Array(text.utf8))
        }

        /// The current revision ID of document `id` (deleted ones included), from `cblite revs`; nil when missing.
        public func currentRevision(_ id: String) async throws -> String? {
            let outcome = try await client.run(["revs", path, id])
            guard outcome.status == 0 else { return nil }
            for line in outcome.output.split(separator: "\n") where line.contains("[CURRENT]") {
                return line.split(separator: " ").first { $0.contains("-") && $0.first?.isNumber == true }.map(String.init)
            }
            return nil
        }

        /// Whether document `id`'s current revision is a deletion (`cblite revs` says "Deleted").
        public func isDeleted(_ id: String) async throws -> Bool {
            let outcome = try await client.run(["revs", path, id])
            return outcome.status == 0 && outcome.output.split(separator: "\n").first?.hasSuffix(", Deleted") == true
        }

        /// The IDs of the live documents (`cblite ls`); with `conflicted`, only the conflicted ones.
        public func documentIDs(conflicted: Bool = false) async throws -> Set<String> {
            guard FileManager.default.fileExists(atPath: path) else { return [] }
            let output = try await command("ls", conflicted ? ["--conf"] : [])
            if output.contains("(No documents)") { return [] }
            return Set(output.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init))
        }

        /// A one-shot pull from `url` (`ws://…/db` or `wss://…`).
        public func pull(from url: String, user: String?, extra: [String] = []) async throws {
            try await replicate("pull", url, user: user, extra: extra)
        }

        /// A one-shot push to `url`.
        public func push(to url: String, user: String?, extra: [String] = []) async throws {
            try await replicate("push", url, user: user, extra: extra)
        }

        /// A replication that is expected to fail; its outcome.
        public func failingReplication(_ verb: String, _ url: String, user: String?) async throws -> Outcome {
            try makeAttachmentsFolder()
            return try await client.run(["--create", verb] + (user.map { ["--user", $0] } ?? []) + [path, url])
        }

        /// Starts a continuous replication (`pull`, `push` or `cp --bidi`); the caller ends it.
        public func startContinuous(_ verb: String, _ url: String, user: String?) throws -> ChildProcess {
            try makeAttachmentsFolder()
            return try client.start(
                ["--create", verb, "--continuous"] + (user.map { ["--user", $0] } ?? []) + [path, url])
        }

        /// Waits until `condition` holds of this database (another process, the client, writes it: it is read again
        /// every 50 ms, for at most `limit`).
        public func waitUntil(
            _ what: String, within limit: Duration = .seconds(30), _ condition: (Database) async throws -> Bool
        ) async throws {
            let deadline = ContinuousClock.now + limit
            while true {
                // A read can fail while the client writes (the file busy): it is read again.
                if (try? await condition(self)) == true { return }
                guard ContinuousClock.now < deadline else {
                    throw ChildProcess.Failure(description: "\(path): \(what) did not happen within \(limit)")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// Stores `bytes` as a blob of this (existing) database, as an app saving a `Blob` would: the file
        /// `Attachments/<base64 SHA-1, '/' as '_'>.blob`; returns the `{"@type":"blob",…}` dictionary that refers to it.
        public func storeBlob(_ bytes: [UInt8], contentType: String) throws -> JSONValue {
            try makeAttachmentsFolder()
            let digest = AttachmentDigest.sha1(of: bytes).description
            let base64 = String(digest.dropFirst("sha1-".count))
            let file = "\(path)/Attachments/\(base64.replacingOccurrences(of: "/", with: "_")).blob"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            return [
                "@type": "blob", "digest": .string(digest), "length": .int(Int64(bytes.count)),
                "content_type": .string(contentType),
            ]
        }

        /// The bytes of the blob `digest` if this database holds it.
        public func blob(_ digest: String) -> [UInt8]? {
            let base64 = String(digest.dropFirst("sha1-".count)).replacingOccurrences(of: "/", with: "_")
            return FileManager.default.contents(atPath: "\(path)/Attachments/\(base64).blob").map { Array($0) }
        }

        /// Removes the database's folder.
        public func remove() {
            try? FileManager.default.removeItem(at: folder)
        }

        private func replicate(_ verb: String, _ url: String, user: String?, extra: [String]) async throws {
            try makeAttachmentsFolder()
            let outcome = try await client.run(
                ["--create", verb] + extra + (user.map { ["--user", $0] } ?? []) + [path, url])
            guard outcome.status == 0 else { throw ChildProcess.Failure(description: "cblite \(verb) failed: \(outcome)") }
        }

        /// `push` of a database without `Attachments/` fails in this client (its README's first quirk); a folder made
        /// before the database is, though, makes `--create` fail.
        private func makeAttachmentsFolder() throws {
            guard FileManager.default.fileExists(atPath: path) else { return }
            try FileManager.default.createDirectory(atPath: "\(path)/Attachments", withIntermediateDirectories: true)
        }
    }
}
