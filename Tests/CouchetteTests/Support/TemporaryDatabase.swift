import Couchette
import Foundation

/// A folder in the temporary directory that is removed when the fixture goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var configuration: DatabaseConfiguration {
        var config = DatabaseConfiguration()
        config.directory = path
        return config
    }

    /// Opens (creating) a database in this folder.
    func open(_ name: String = "todo", configure: (inout DatabaseConfiguration) -> Void = { _ in }) throws -> Database {
        var config = configuration
        configure(&config)
        return try Database(name: name, config: config)
    }
}

/// Runs `body` with two new databases in one temporary folder (`configure` sets each one's configuration by name),
/// closed afterwards.
func withDatabases(
    _ first: String, _ second: String, configure: (String, inout DatabaseConfiguration) -> Void = { _, _ in },
    _ body: (Database, Database) async throws -> Void
) async throws {
    let directory = TemporaryDirectory()
    let one = try directory.open(first) { configure(first, &$0) }
    let two = try directory.open(second) { configure(second, &$0) }
    defer {
        try? one.close()
        try? two.close()
    }
    try await body(one, two)
}

/// Follows a live query's `n` column: each new result's first row's `n`, then nil when the results end.
func liveCounts(_ query: Query) -> (Inbox<Int?>, Task<Void, any Error>) {
    let inbox = Inbox<Int?>()
    let task = Task {
        for try await results in query.changes() { inbox.put(results.allResults().first?.int(forKey: "n")) }
        inbox.put(nil)
    }
    return (inbox, task)
}

/// Collects values delivered to listeners, as an async stream.
final class Inbox<Element: Sendable>: Sendable {
    let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Element.self)
    }

    func put(_ element: Element) { continuation.yield(element) }
}
