import CouchetteCore
import Foundation

// MARK: - PythonOracle

/// A third-party Python package from PyPI, in its own virtualenv under `.build/` made on first use, for tests that
/// check our formats and protocols against someone else's implementation (a real SQLCipher, a BLIP client).
///
/// ```swift
/// let sqlcipher = PythonOracle.sqlcipher.shared
/// let output = try sqlcipher?.run("import sqlcipher3; print(sqlcipher3.sqlite_version)")
/// ```
public final class PythonOracle: Sendable {
    /// How to make one: the virtualenv's folder under `.build/`, the PyPI requirements and a module to import.
    public struct Recipe: Sendable {
        public let folder: String
        public let requirements: [String]
        public let module: String
    }

    /// A real SQLCipher 4 (`sqlcipher3-binary`).
    public static let sqlcipher = Lazy(Recipe(folder: "sqlcipher-oracle", requirements: ["sqlcipher3-binary"], module: "sqlcipher3"))
    /// A third-party, pull-only Couchbase BLIP client (`pythonblip`; it calls `websockets.connect(extra_headers:)`,
    /// which `websockets` 14 renamed).
    public static let pythonblip = Lazy(
        Recipe(folder: "pythonblip-oracle", requirements: ["pythonblip", "websockets<14"], module: "pythonblip.replicator"))

    /// An oracle made on first use.
    public final class Lazy: Sendable {
        /// The oracle, or nil when its virtualenv cannot be made here (no `python3 -m venv`, or PyPI out of reach);
        /// the reason is printed.
        public let shared: PythonOracle?

        init(_ recipe: Recipe) {
            shared = PythonOracle.make(recipe)
        }
    }

    /// The virtualenv's interpreter.
    public let python: String

    /// Whether a missing oracle fails the interop tests rather than skipping them: in CI (`CI=true`), where
    /// `.ci/run` installs the oracles (`make oracles`).
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    private init(python: String) {
        self.python = python
    }

    private static func make(_ recipe: Recipe) -> PythonOracle? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let venv = root.appendingPathComponent(".build/\(recipe.folder)").path
        let python = "\(venv)/bin/python"
        let check = "import \(recipe.module)"
        if (try? run([python, "-c", check])) != nil { return PythonOracle(python: python) }
        do {
            _ = try run(["python3", "-m", "venv", venv])
            _ = try run([python, "-m", "pip", "install", "--quiet"] + recipe.requirements)
            _ = try run([python, "-c", check])
            return PythonOracle(python: python)
        } catch {
            print("\(recipe.requirements[0]) oracle unavailable: \(error)")
            return nil
        }
    }

    /// With the `pythonblip` oracle: pulls `database` at `127.0.0.1:port` over BLIP as `user` into `folder`; returns
    /// the documents pythonblip wrote (by ID, the last body of each) and the body of the checkpoint it saved (an error
    /// reply to its `setCheckpoint` fails the script).
    public func pullWithPythonBLIP(
        port: Int, database: String, user: String, password: String, into folder: String
    ) throws -> (documents: [String: JSONValue], checkpoint: JSONValue?) {
        let output = try run(Self.pythonBLIPPull, [String(port), database, user, password, folder], within: .seconds(120))
        let lines = output.split(separator: "\n").map { try? JSONValue(parsing: Array($0.utf8)) }
        let documents = lines.dropLast().compactMap { $0?.objectValue }.reduce(into: [String: JSONValue]()) {
            $0.merge($1) { _, new in new }
        }
        return (documents, lines.last ?? nil)
    }

    /// The pull script (`sys.argv`: port, database, user, password, folder).
    private static let pythonBLIPPull = """
        import json, sys
        from pythonblip.headers import BasicAuth
        from pythonblip.output import LocalFile
        from pythonblip.replicator import Replicator, ReplicatorConfiguration, ReplicatorType
        port, database, user, password, folder = sys.argv[1:6]
        replicator = Replicator(ReplicatorConfiguration.create(
            database, "127.0.0.1", ReplicatorType.PULL, BasicAuth(user, password), False, port,
            output=LocalFile(folder)))
        replicator.start()
        replicator.replicate()
        replicator.stop()
        print(open(f"{folder}/{database}.jsonl").read(), end="")
        print(json.dumps(replicator.set_checkpoint_body))
        """

    /// Runs a Python script with `arguments` (as `sys.argv[1...]`) and returns what it printed.
    public func run(_ script: String, _ arguments: [String] = [], within limit: Duration = .seconds(600)) throws -> String {
        try Self.run([python, "-c", script] + arguments, within: limit)
    }

    /// Runs a command (looked up in `PATH`) and returns its output; throws with it when the command fails.
    private static func run(_ command: [String], within limit: Duration = .seconds(600)) throws -> String {
        try ChildProcess.run(command, within: limit)
    }
}
