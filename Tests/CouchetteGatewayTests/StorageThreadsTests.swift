import CouchetteTestSupport
import Foundation
import Testing

@testable import CouchetteGateway

// MARK: - StorageThreadsTests

/// A storage thread pool starts threads as work finds none free, up to its limit, and threads that wait without work
/// end: a pool whose database was deleted, or that a burst grew, gives its threads back.
@Suite(.timeLimit(.minutes(1))) struct StorageThreadsTests {
    @Test func threadsStartUpToTheLimitAndEndWhenIdle() async throws {
        let threads = StorageThreads(name: "idle-test", limit: 3, idleLifetime: .milliseconds(100))
        let gate = DispatchSemaphore(value: 0)
        // The group runs on the pool too: its children start whatever Swift's cooperative threads are doing.
        let jobs = Task(executorPreference: threads) {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<5 {
                    group.addTask(executorPreference: threads) { gate.wait() }
                }
            }
        }
        // Five jobs that block: three threads run three of them, and no fourth thread starts.
        #expect(try await offCooperativeThreads { threads.waitUntilRunning(3) })
        #expect(threads.threadCount == 3)
        for _ in 0..<5 { gate.signal() }
        await jobs.value

        #expect(try await offCooperativeThreads { threads.waitUntilThreads(atMost: 0) })
        #expect(threads.threadCount == 0)
        // Work after they ended starts a thread again.
        let again = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask(executorPreference: threads) { gate.wait() }
            }
        }
        #expect(try await offCooperativeThreads { threads.waitUntilRunning(1) })
        #expect(threads.threadCount == 1)
        gate.signal()
        await again.value
    }

    @Test func aDatabasesPoolTakesTheLimitItIsGivenLast() {
        let first = StorageThreads.forDatabase("limit-test", limit: 4)
        let again = StorageThreads.forDatabase("limit-test", limit: 9)
        #expect(first === again)
        #expect(again.limit == 9)
    }
}
