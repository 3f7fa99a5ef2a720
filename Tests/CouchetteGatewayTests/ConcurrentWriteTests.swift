import CouchetteCore
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - ConcurrentWriteTests

/// Concurrent clients updating one document from the same parent: exactly one wins.
@Suite("Concurrent writes over HTTP", .timeLimit(.minutes(5)))
struct ConcurrentWriteTests {
    @Test("N clients updating one document from the same parent get one 201 and N-1 409s")
    func oneWinner() async throws {
        try await GatewayFixture.withRunningGateway { client, ports in
            let created = try await client.send("PUT", port: ports.publicPort, path: "/todo/doc", json: ["n": 0])
            let parent = try #require(try created.jsonValue()["rev"]?.stringValue)
            let clients = 16
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 1...clients {
                    group.addTask {
                        try await client.send(
                            "PUT", port: ports.publicPort, path: "/todo/doc?rev=\(parent)", json: ["n": .int(Int64(n))]
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == clients - 1)
            let open = try await client.send(port: ports.adminPort, path: "/todo/doc?open_revs=all").jsonValue()
            #expect(open.arrayValue?.count == 1)
            #expect(try await client.send(port: ports.adminPort, path: "/todo/doc").jsonValue()["_rev"]?.stringValue?.hasPrefix("2-") == true)
        }
    }
}
