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
        try await offCooperativeThreads {
            let reads = PostgresFeedReads()
            let queries = Atomic<Int>(0)
            let inQuery = DispatchSemaphore(value: 0)
            let answer = DispatchSemaphore(value: 0)
            let readers = 8
            let results = Mutex<[[ChangeEntry]]>([])
            let done = DispatchGroup()
            func read(first: Bool) {
                done.enter()
                Thread { [entries] in
                    defer { done.leave() }
                    let got = try? reads.read(channels: ["a"], since: 3, limit: 10, commits: 5) {
                        () throws(GatewayError) -> [ChangeEntry] in
                        queries.add(1, ordering: .relaxed)
                        if first {
                            inQuery.signal()
                            answer.wait()
                        }
                        return entries
                    }
                    results.withLock { $0.append(got ?? []) }
                }.start()
            }
            read(first: true)
            inQuery.wait()
            for _ in 1..<readers { read(first: false) }
            answer.signal()
            done.wait()
            #expect(queries.load(ordering: .relaxed) == 1)
            #expect(results.withLock { $0 }.count == readers)
            #expect(results.withLock { $0 }.allSatisfy { $0 == entries })
        }
    }

    @Test func aCommitOrAnotherKeyAsksAgainAndAFailureOrAWholeListingIsNotKept() throws {
        let reads = PostgresFeedReads()
        var queries = 0
        func read(since: UInt64 = 3, limit: Int? = 100, commits: UInt64, failing: Bool = false) throws(GatewayError)
            -> [ChangeEntry]
        {
            try reads.read(channels: nil, since: since, limit: limit, commits: commits) { () throws(GatewayError) in
                queries += 1
                if failing { throw GatewayError.serviceUnavailable("down") }
                return entries
            }
        }
        #expect(throws: GatewayError.self) { try read(commits: 1, failing: true) }
        _ = try read(commits: 1)
        #expect(queries == 2)
        _ = try read(commits: 1)
        #expect(queries == 2)
        _ = try read(commits: 2)
        #expect(queries == 3)
        _ = try read(since: 4, commits: 2)
        #expect(queries == 4)
        // A read without a limit (a whole channel listing) is never kept.
        _ = try read(limit: nil, commits: 2)
        _ = try read(limit: nil, commits: 2)
        #expect(queries == 6)
    }
}
