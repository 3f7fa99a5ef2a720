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
            let pulled = try await offCooperativeThreads {
                try oracle.pullWithPythonBLIP(
                    port: ports.publicPort, database: "todo", user: "alice", password: "pass", into: folder.path)
            }
            #expect(
                pulled.documents == ["list1": ["channels": ["a"], "name": "Groceries"], "list2": ["channels": ["a"], "n": 2]])
            // The checkpoint it saved: the `sequence` property of the last rev, as pythonblip keeps it.
            #expect(pulled.checkpoint?["remote"] == "4")
        }
    }
}
