import CouchetteCore
import Foundation
import Synchronization
import Testing

@testable import Couchette

/// A pass with two stores under way at once (``ReplicationPeer/concurrentStores``): whatever order they finish in,
/// batches are reported and checkpointed in the order they were read.
@Suite(.timeLimit(.minutes(2))) struct ReplicationPassTests {
    /// Holds the first store until a later one has finished, so that stores finish out of order.
    final class Gate: Sendable {
        private struct State {
            var started = 0
            var laterFinished = false
            var waiting: CheckedContinuation<Void, Never>?
        }

        private let state = Mutex(State())

        /// Whether this is the first store.
        func start() -> Bool {
            state.withLock { state in
                state.started += 1
                return state.started == 1
            }
        }

        /// Returns once a later store has finished.
        func waitForLater() async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state in
                    if state.laterFinished { return true }
                    state.waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }

        func laterFinished() {
            let waiting = state.withLock { state in
                state.laterFinished = true
                return state.waiting.take()
            }
            waiting?.resume()
        }
    }

    /// A real local collection as the target, its first store held until the second has finished (and then failing
    /// with `firstFails`).
    struct OutOfOrderTarget: ReplicationPeer {
        let peer: LocalReplicationPeer
        var firstFails = false
        let gate = Gate()

        var identity: String { peer.identity }
        var concurrentStores: Int { 2 }

        func changes(since: String?, limit: Int) async throws -> ReplicationChanges {
            try await peer.changes(since: since, limit: limit)
        }

        func revsDiff(_ revisions: [String: [String]]) async throws -> [String: MissingRevisions] {
            try await peer.revsDiff(revisions)
        }

        func revisions(_ wanted: [WantedRevision]) async throws -> [ReplicatedRevision] {
            try await peer.revisions(wanted)
        }

        func store(_ revisions: [ReplicatedRevision]) async throws -> [ReplicationWriteResult] {
            let isFirst = gate.start()
            if isFirst { await gate.waitForLater() }
            if isFirst && firstFails { throw CouchetteError(.network, message: "the connection closed") }
            let results = try await peer.store(revisions)
            if !isFirst { gate.laterFinished() }
            return results
        }

        func checkpoint(id: String) async throws -> [String: JSONValue]? { try await peer.checkpoint(id: id) }

        func saveCheckpoint(_ checkpoint: [String: JSONValue], id: String) async throws {
            try await peer.saveCheckpoint(checkpoint, id: id)
        }

        func waitForChanges(since: String?, timeout: Duration) async throws {
            try await peer.waitForChanges(since: since, timeout: timeout)
        }
    }

    @Test("Stores finishing out of order are reported and checkpointed in batch order")
    func outOfOrderStores() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let source = try phone.defaultCollection()
            for index in 0..<6 { _ = try source.putProperties(["n": index], documentID: "d\(index)") }
            let target = OutOfOrderTarget(peer: LocalReplicationPeer(collection: try tablet.defaultCollection()))
            let pass = ReplicationPass(
                source: LocalReplicationPeer(collection: source), target: target, documentIDs: nil, batchSize: 2,
                localCollection: source, isPush: true)
            let reported = Mutex<[[String]]>([])
            let caughtUp = try await pass.run(reset: false) { report in
                reported.withLock { $0.append(report.written.map(\.documentID)) }
            }
            #expect(reported.withLock { $0 } == [["d0", "d1"], ["d2", "d3"], ["d4", "d5"]])
            #expect(try tablet.defaultCollection().count == 6)
            let checkpoint = try await target.checkpoint(id: pass.replicationID)
            #expect(checkpoint?["lastSequence"]?.stringValue == caughtUp)
            #expect(caughtUp == "6")
        }
    }

    @Test("When an earlier store fails, the later ones already stored are still reported, and nothing is checkpointed")
    func laterStoresReportedWhenAnEarlierOneFails() async throws {
        try await withDatabases("phone", "tablet") { phone, tablet in
            let source = try phone.defaultCollection()
            for index in 0..<4 { _ = try source.putProperties(["n": index], documentID: "d\(index)") }
            let target = OutOfOrderTarget(
                peer: LocalReplicationPeer(collection: try tablet.defaultCollection()), firstFails: true)
            let pass = ReplicationPass(
                source: LocalReplicationPeer(collection: source), target: target, documentIDs: nil, batchSize: 2,
                localCollection: source, isPush: true)
            let reported = Mutex<[[String]]>([])
            await #expect(throws: CouchetteError.self) {
                try await pass.run(reset: false) { report in
                    reported.withLock { $0.append(report.written.map(\.documentID)) }
                }
            }
            #expect(reported.withLock { $0 } == [["d2", "d3"]])
            #expect(try await target.checkpoint(id: pass.replicationID) == nil)
        }
    }
}
