import CouchetteCore
import CouchetteTestSupport
import Foundation
import Testing

// MARK: - GatewayDurabilityTests

/// A gateway on `sqlite:` killed with SIGKILL during a bulk load keeps every acknowledged document.
@Suite("Gateway durability", .timeLimit(.minutes(5)))
struct GatewayDurabilityTests {
    @Test("Every document acknowledged before SIGKILL is there after restart")
    func acknowledgedWritesSurviveSIGKILL() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-kill-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configPath = directory.appendingPathComponent("config.json").path
        let config: JSONValue = [
            "interface": "127.0.0.1:0", "adminInterface": "127.0.0.1:0",
            "databases": ["db": ["server": .string("sqlite:\(directory.appendingPathComponent("db.sqlite3").path)")]],
        ]
        try Data(config.serialized()).write(to: URL(fileURLWithPath: configPath))

        let client = HTTPTestClient()
        defer { client.close() }
        let gateway = try await GatewayProcess.start(configPath: configPath)
        let acknowledged = AcknowledgedIDs()
        let adminPort = gateway.adminPort
        let loader = Task {
            var batch = 0
            while !Task.isCancelled {
                let ids = (0..<50).map { "doc-\(batch)-\($0)" }
                let docs = JSONValue.array(ids.map { ["_id": .string($0), "batch": .int(Int64(batch))] })
                guard
                    let reply = try? await client.send(
                        "POST", port: adminPort, path: "/db/_bulk_docs", json: ["docs": docs]),
                    reply.status == 201
                else {
                    await acknowledged.finish()
                    return
                }
                await acknowledged.add(ids)
                batch += 1
            }
        }
        // Kill mid-load, once enough batches were acknowledged (an event, not a sleep).
        try await withDeadline(.seconds(120), "2,000 acknowledged writes") {
            await acknowledged.wait(forAtLeast: 2_000)
        }
        gateway.kill()
        loader.cancel()
        _ = await loader.value

        let saved = await acknowledged.ids
        #expect(saved.count >= 2_000)
        let restarted = try await GatewayProcess.start(configPath: configPath)
        defer { restarted.terminate() }
        var missing: [String] = []
        for chunk in stride(from: 0, to: saved.count, by: 500) {
            let keys = Array(saved[chunk..<min(chunk + 500, saved.count)])
            let reply = try await client.send(
                "POST", port: restarted.adminPort, path: "/db/_all_docs",
                json: ["keys": .array(keys.map(JSONValue.string))])
            try #require(reply.status == 200, "_all_docs after the restart: \(reply.status) \(reply.text)")
            let rows = try #require(try reply.jsonValue()["rows"]?.arrayValue, "_all_docs without rows: \(reply.text)")
            try #require(rows.count == keys.count, "\(rows.count) rows for \(keys.count) keys")
            for (key, row) in zip(keys, rows) where row["error"] != nil || row["id"]?.stringValue != key {
                missing.append(key)
            }
        }
        #expect(missing.isEmpty, "missing after SIGKILL: \(missing.prefix(10))")
        // Still writable after recovery.
        let after = try await client.send("PUT", port: restarted.adminPort, path: "/db/after-crash", json: ["ok": true])
        #expect(after.status == 201)
    }
}

// MARK: - AcknowledgedIDs

/// IDs acknowledged by the gateway, with a wait for a count.
actor AcknowledgedIDs {
    private(set) var ids: [String] = []
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    private var finished = false

    func add(_ newIDs: [String]) {
        ids += newIDs
        let ready = waiters.filter { $0.0 <= ids.count }
        waiters.removeAll { $0.0 <= ids.count }
        for (_, continuation) in ready { continuation.resume() }
    }

    /// Wakes every waiter: no more IDs will come.
    func finish() {
        finished = true
        let all = waiters
        waiters = []
        for (_, continuation) in all { continuation.resume() }
    }

    func wait(forAtLeast count: Int) async {
        if ids.count >= count || finished { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}
