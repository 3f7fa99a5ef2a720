import Hummingbird

// MARK: - ChildTaskResponder

/// Runs the responder chain (middleware, router, handler) of a `_changes` request in a child task of the connection's
/// task; every other request runs in the connection's task itself.
///
/// A connection's task lives as long as the connection, and Swift's task allocator keeps the slabs of a task's deepest
/// async stack until the task ends. A continuous `_changes` feed idle for hours kept the frames of every middleware and
/// of the handler it passed through on the way in (~16 KB of the ~43 KB an idle feed held); the child task frees them
/// once the response is built, and the connection's task then only holds what writes the body. Task-local values (the
/// request's logger) and cancellation reach the child as they would the chain itself. Other requests do not pay the
/// extra task, nor the wait for the connection's task to be scheduled again after it (behind, say, the feeds a write
/// just woke).
struct ChildTaskResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: Sendable {
    typealias Context = Inner.Context

    /// The responder the chain starts with.
    let inner: Inner

    /// The threads the chain runs on (``HandlerThreads``); nil for Swift's cooperative threads.
    var threads: HandlerThreads? = nil

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let threads else { return try await respondHere(to: request, context: context) }
        return try await threads.run(forPath: request.uri.path) { try await respondHere(to: request, context: context) }
    }

    private func respondHere(to request: Request, context: Context) async throws -> Response {
        guard Self.mayStream(request) else { return try await inner.respond(to: request, context: context) }
        async let response = inner.respond(to: request, context: context)
        return try await response
    }

    /// Whether the request is for a `_changes` feed (the one response that may stay open for hours).
    static func mayStream(_ request: Request) -> Bool {
        request.uri.path.hasSuffix("/_changes")
    }
}
