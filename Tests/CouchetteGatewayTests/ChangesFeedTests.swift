import CouchetteCore
import Testing

@testable import CouchetteGateway

// MARK: - Feed

extension ChangesTests {
    /// The feed's events over a notifier, without HTTP.
    @Suite("_changes feed", .timeLimit(.minutes(5)))
    struct Feed {
        @Test("A continuous feed sends the backlog, reports caught up, then wakes on a write")
        func continuous() async throws {
            let database = try ChangesTests.database()
            try database.documents.put(id: "one", body: [:])
            let options = ChangesOptions(feed: .continuous)
            var feed = ChangesFeed(
                reader: ChangesReader(database: database, caller: .admin, options: options),
                notifier: database.changeNotifier)
            guard case .entries(let backlog) = try await feed.next() else {
                Issue.record("expected the backlog")
                return
            }
            #expect(backlog.map(\.sequence) == [1])
            #expect(backlog[0].json["id"] == "one")
            #expect(try await feed.next() == .caughtUp)
            let write = Task { try database.documents.put(id: "two", body: [:]) }
            guard case .entries(let rows) = try await feed.next() else {
                Issue.record("expected entries")
                return
            }
            _ = try await write.value
            #expect(rows.map(\.sequence) == [2])
            #expect(feed.lastSequence == 2)
        }

        @Test("Heartbeats while idle; closing the notifier ends the feed")
        func heartbeatsAndClose() async throws {
            let database = try ChangesTests.database()
            let options = ChangesOptions(feed: .continuous, heartbeat: .milliseconds(10))
            var feed = ChangesFeed(
                reader: ChangesReader(database: database, caller: .admin, options: options),
                notifier: database.changeNotifier)
            #expect(try await feed.next() == .caughtUp)
            #expect(try await feed.next() == .heartbeat)
            #expect(try await feed.next() == .heartbeat)
            database.setState(.offline)
            #expect(try await feed.next() == nil)
            #expect(try await feed.next() == nil)
        }

        @Test("A longpoll times out empty; a continuous feed ends at its limit")
        func timeoutAndLimit() async throws {
            let database = try ChangesTests.database()
            var longpoll = ChangesFeed(
                reader: ChangesReader(
                    database: database, caller: .admin,
                    options: ChangesOptions(feed: .longpoll, timeout: .milliseconds(10))),
                notifier: database.changeNotifier)
            #expect(try await longpoll.next() == nil)
            #expect(longpoll.lastSequence == 0)

            for id in ["a", "b", "c"] { try database.documents.put(id: id, body: [:]) }
            var limited = ChangesFeed(
                reader: ChangesReader(
                    database: database, caller: .admin, options: ChangesOptions(feed: .continuous, limit: 2)),
                notifier: database.changeNotifier)
            guard case .entries(let rows) = try await limited.next() else {
                Issue.record("expected entries")
                return
            }
            #expect(rows.map(\.sequence) == [1, 2])
            #expect(try await limited.next() == nil)
        }

        @Test("Invisible changes wake a user's feed without sending anything")
        func invisibleChanges() async throws {
            let database = try ChangesTests.database()
            let options = ChangesOptions(feed: .longpoll, timeout: .seconds(30))
            var feed = ChangesFeed(
                reader: ChangesReader(database: database, caller: ChangesTests.user(channels: ["a"]), options: options),
                notifier: database.changeNotifier)
            let writes = Task {
                try database.documents.put(id: "hidden", body: ["channels": ["b"]])
                try database.documents.put(id: "shown", body: ["channels": ["a"]])
            }
            guard case .entries(let rows) = try await feed.next() else {
                Issue.record("expected entries")
                return
            }
            try await writes.value
            #expect(rows.map { $0.json["id"]?.stringValue } == ["shown"])
            #expect(try await feed.next() == nil)
        }
    }
}
