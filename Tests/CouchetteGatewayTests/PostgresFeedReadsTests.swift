import CouchetteCore
import CouchetteTestSupport
import Foundation
import Synchronization
import Testing

@testable import CouchetteGateway

/// Feeds woken together ask PostgreSQL once: a kept answer or a query under way serves every read of the same
/// channels, `since` and limit at the same commit count, and nothing is reused across a commit.
@Suite(.timeLimit(.minutes(2))) struct PostgresFeedReadsTests {
    private let entries = [
        ChangeEntry(sequence: 7, documentID: "doc", revisionID: try! RevisionID(parsing: "1-abc"), isDeleted: false)
    ]

    @Test func readersAtOneCommitCountShareOneQueryUnderWay() async throws {
        let joins = AsyncStream.makeStream(of: Void.self)
        let reads = PostgresFeedReads(joined: { joins.continuation.yield() })
        let queries = QueryCount()
        let inQuery = AsyncStream.makeStream(of: Void.self)
        let answer = AsyncStream.makeStream(of: Void.self)
        let readers = 8
        let entries = entries
        @Sendable func read(first: Bool) async throws -> [ChangeEntry] {
            try await reads.read(channels: ["a"], since: 3, limit: 10, commits: 5) {
                () async throws(GatewayError) -> [ChangeEntry] in
                queries.count.withLock { $0 += 1 }
                if first {
                    inQuery.continuation.yield()
                    for await _ in answer.stream { break }
                }
                return entries
            }
        }
        let results = try await withThrowingTaskGroup(of: [ChangeEntry].self) { group in
            group.addTask { try await read(first: true) }
            for await _ in inQuery.stream { break }
            for _ in 1..<readers { group.addTask { try await read(first: false) } }
            // Every other reader waits for the query under way before it answers.
            var waiting = 0
            for await _ in joins.stream {
                waiting += 1
                if waiting == readers - 1 { break }
            }
            answer.continuation.yield()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(queries.count.withLock { $0 } == 1)
        #expect(results.count == readers)
        #expect(results.allSatisfy { $0 == entries })
    }

    @Test func aCommitOrAnotherKeyAsksAgainAndAFailureOrAWholeListingIsNotKept() async throws {
        let reads = PostgresFeedReads()
        let queries = Atomic<Int>(0)
        func read(since: UInt64 = 3, limit: Int? = 100, commits: UInt64, failing: Bool = false) async throws(GatewayError)
            -> [ChangeEntry]
        {
            try await reads.read(channels: nil, since: since, limit: limit, commits: commits) {
                () async throws(GatewayError) in
                queries.add(1, ordering: .relaxed)
                if failing { throw GatewayError.serviceUnavailable("down") }
                return entries
            }
        }
        await #expect(throws: GatewayError.self) { try await read(commits: 1, failing: true) }
        _ = try await read(commits: 1)
        #expect(queries.load(ordering: .relaxed) == 2)
        _ = try await read(commits: 1)
        #expect(queries.load(ordering: .relaxed) == 2)
        _ = try await read(commits: 2)
        #expect(queries.load(ordering: .relaxed) == 3)
        _ = try await read(since: 4, commits: 2)
        #expect(queries.load(ordering: .relaxed) == 4)
        // A read without a limit (a whole channel listing) is never kept.
        _ = try await read(limit: nil, commits: 2)
        _ = try await read(limit: nil, commits: 2)
        #expect(queries.load(ordering: .relaxed) == 6)
    }
}

/// How many queries ran, shared with the readers' tasks.
private final class QueryCount: Sendable {
    let count = Mutex(0)
}
