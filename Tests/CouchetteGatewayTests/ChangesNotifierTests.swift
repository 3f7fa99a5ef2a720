import Testing

@testable import CouchetteGateway

// MARK: - Notifier

extension ChangesTests {
    /// ``ChangeNotifier``'s waits: changes, deadlines from its shared timer, closing and cancellation.
    @Suite("_changes notifier", .timeLimit(.minutes(5)))
    struct Notifier {
        @Test("A wait returns the new sequence when a later one is announced, at once if it already was")
        func changed() async {
            let notifier = ChangeNotifier(sequence: 3)
            #expect(await notifier.wait(after: 2, deadline: nil) == .changed(3))
            // Whether the wait registers before or after the announcements, it sees 4.
            async let outcome = notifier.wait(after: 3, deadline: .now + .seconds(60))
            notifier.notify(2)  // older: ignored
            notifier.notify(4)
            #expect(await outcome == .changed(4))
            #expect(notifier.waiterCount == 0)
        }

        /// Far enough from the early deadline (20 ms) that a loaded machine running the other tests in parallel
        /// usually fires the early one first (3 s was not, while the private PostgreSQL server's `initdb` shares the
        /// two cores).
        static let lateDeadline = Duration.milliseconds(10_000)

        @Test("Deadlines fire in order, an earlier one re-arming the shared timer")
        func deadlines() async {
            // The timer is a task: when the whole test process leaves new tasks unscheduled for longer than the late
            // deadline (seen: 10–12 s in full runs), both deadlines come due together and their order cannot be
            // seen; the scenario then runs again. A timer that is not re-armed fails every attempt.
            for _ in 1...3 {
                let notifier = ChangeNotifier(sequence: 0)
                let start = ContinuousClock.now
                async let late = notifier.wait(after: 0, deadline: start + Self.lateDeadline)
                // The late wait must be registered first, so the early one re-arms the timer (no time passes here).
                while notifier.waiterCount < 1 {
                    // Bounded: on a starved machine the late wait could come and go unseen, and this would spin.
                    guard ContinuousClock.now - start < Self.lateDeadline else { break }
                    await Task.yield()
                }
                async let early = notifier.wait(after: 0, deadline: start + .milliseconds(20))
                #expect(await early == .deadline)
                let seenInOrder = ContinuousClock.now - start < Self.lateDeadline && notifier.waiterCount == 1
                #expect(await late == .deadline)
                #expect(ContinuousClock.now - start >= Self.lateDeadline)
                #expect(await notifier.wait(after: 0, deadline: .now - .seconds(1)) == .deadline)
                if seenInOrder { return }
            }
            Issue.record("The early deadline never fired before the late one was due, in three attempts")
        }

        @Test("Closing wakes waiters and makes waits return at once until reopened")
        func closing() async {
            let notifier = ChangeNotifier(sequence: 0)
            async let outcome = notifier.wait(after: 0, deadline: .now + .seconds(60))
            notifier.close()  // before or after the wait registers: either way it ends closed
            #expect(await outcome == .closed)
            #expect(await notifier.wait(after: 0, deadline: nil) == .closed)
            #expect(await notifier.wait(after: 0) == nil)
            notifier.reopen()
            notifier.notify(1)
            #expect(await notifier.wait(after: 0) == 1)
        }

        @Test("Cancelling the waiting task ends its wait")
        func cancellation() async {
            let notifier = ChangeNotifier(sequence: 0)
            let task = Task { await notifier.wait(after: 0, deadline: .now + .seconds(60)) }
            task.cancel()  // before or after the wait registers: either way it ends closed
            #expect(await task.value == .closed)
            #expect(notifier.waiterCount == 0)
        }

        @Test("A wake-up callback runs once: on the change, at once when it already happened, .closed when cancelled")
        func callbacks() async {
            let notifier = ChangeNotifier(sequence: 3)
            let (outcomes, record) = AsyncStream<ChangeNotifier.WaitOutcome>.makeStream()
            var received = outcomes.makeAsyncIterator()

            let waiting = notifier.newWaiterID()
            notifier.whenChanged(waiting, after: 3, deadline: nil) { record.yield($0) }
            #expect(notifier.waiterCount == 1)  // registered, no task behind it
            notifier.notify(5)
            #expect(await received.next() == .changed(5))
            #expect(notifier.waiterCount == 0)
            notifier.cancelWait(waiting)  // already woken: nothing more
            notifier.notify(6)

            notifier.whenChanged(notifier.newWaiterID(), after: 2, deadline: nil) { record.yield($0) }
            #expect(await received.next() == .changed(6))  // already past: at once

            let cancelled = notifier.newWaiterID()
            notifier.whenChanged(cancelled, after: 6, deadline: nil) { record.yield($0) }
            notifier.cancelWait(cancelled)
            #expect(await received.next() == .closed)
            #expect(notifier.waiterCount == 0)

            notifier.whenChanged(notifier.newWaiterID(), after: 6, deadline: .now + .milliseconds(20)) { record.yield($0) }
            #expect(await received.next() == .deadline)
            notifier.whenChanged(notifier.newWaiterID(), after: 6, deadline: nil) { record.yield($0) }
            notifier.close()
            #expect(await received.next() == .closed)
            notifier.notify(7)  // each callback ran once: nothing else arrives
            record.finish()
            #expect(await received.next() == nil)
        }
    }
}
