import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

/// A third-party BLIP client, PyPI's `pythonblip` (pull only), pulls from the gateway over `/{db}/_blipsync`: its
/// checkpoint read, `subChanges`, the `changes` reply and the `rev`s it stores, then its checkpoint write.
@Suite(
    .timeLimit(.minutes(5)),
    .enabled(
        if: PythonOracle.isRequired || PythonOracle.pythonblip.shared != nil,
        "pythonblip is not installed (make oracles) and PyPI is out of reach"))
struct PythonBLIPInteropTests {
    static var oracle: PythonOracle {
        get throws { try #require(PythonOracle.pythonblip.shared, "CI=true: the pythonblip oracle must be installed") }
    }

    /// Pulls `database` as `user` into a folder and prints the JSON lines pythonblip wrote, then its checkpoint
    /// (`sys.argv`: port, database, user, password, folder).
    static let pull = """
        import json, logging, sys
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

    @Test("pythonblip pulls the user's documents with their bodies and saves its checkpoint")
    func pull() async throws {
        let oracle = try Self.oracle
        try await StreamingGateway.run(ChangesTests.usersConfig()) { _, client, ports in
            try await ChangesTests.put(client, port: ports.adminPort, "list1", ["channels": ["a"], "name": "Groceries"])
            try await ChangesTests.put(client, port: ports.adminPort, "secret", ["channels": ["b"], "name": "Bob's"])
            let first = try await ChangesTests.put(client, port: ports.adminPort, "list2", ["channels": ["a"], "n": 1])
            try await ChangesTests.put(client, port: ports.adminPort, "list2", ["channels": ["a"], "n": 2], rev: first)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pythonblip-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let output = try await offCooperativeThreads {
                try oracle.run(Self.pull, [String(ports.publicPort), "todo", "alice", "pass", folder.path], within: .seconds(120))
            }
            let lines = output.split(separator: "\n").map { try? JSONValue(parsing: Array($0.utf8)) }
            let documents = lines.dropLast().compactMap { $0?.objectValue }.reduce(into: [String: JSONValue]()) {
                $0.merge($1) { _, new in new }
            }
            #expect(documents == ["list1": ["channels": ["a"], "name": "Groceries"], "list2": ["channels": ["a"], "n": 2]])
            // The checkpoint it saved (an error reply to its setCheckpoint would have failed the script).
            #expect(lines.last??["remote"] == "4")  // the `sequence` property of the last rev, as pythonblip keeps it
        }
    }
}
