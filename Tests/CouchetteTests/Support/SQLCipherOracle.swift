import CouchetteTestSupport
import Foundation

// MARK: - SQLCipherOracle

/// A real SQLCipher 4 (PyPI's `sqlcipher3-binary`, in a virtualenv made under `.build/sqlcipher-oracle` on first
/// use) to check our encrypted files against: it runs Python scripts that use the `sqlcipher3` module.
///
/// ```swift
/// let output = try SQLCipherOracle.shared?.run("import sqlcipher3; print(sqlcipher3.sqlite_version)")
/// ```
final class SQLCipherOracle: Sendable {
    let python: String

    /// The oracle, or nil when the virtualenv cannot be made here (no `python3 -m venv`, or PyPI out of reach);
    /// the reason is printed.
    static let shared: SQLCipherOracle? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let venv = root.appendingPathComponent(".build/sqlcipher-oracle").path
        let python = "\(venv)/bin/python"
        let check = "import sqlcipher3"
        if (try? run([python, "-c", check])) != nil { return SQLCipherOracle(python: python) }
        do {
            _ = try run(["python3", "-m", "venv", venv])
            _ = try run([python, "-m", "pip", "install", "--quiet", "sqlcipher3-binary"])
            _ = try run([python, "-c", check])
            return SQLCipherOracle(python: python)
        } catch {
            print("SQLCipher oracle unavailable: \(error)")
            return nil
        }
    }()

    /// Whether a missing oracle fails the interop tests rather than skipping them: in CI (`CI=true`), where
    /// `.ci/run` installs it (`make oracles`).
    static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    private init(python: String) {
        self.python = python
    }

    /// Runs a Python script with `arguments` (as `sys.argv[1...]`) and returns what it printed.
    func run(_ script: String, _ arguments: [String] = []) throws -> String {
        try Self.run([python, "-c", script] + arguments)
    }

    /// Runs a command (looked up in `PATH`, at most 10 minutes) and returns its output; throws with it when the
    /// command fails.
    private static func run(_ command: [String]) throws -> String {
        try ChildProcess.run(command, within: .seconds(600))
    }
}
