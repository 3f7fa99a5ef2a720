import CouchetteCore
import Foundation

// MARK: - JavaScriptSyncFunction

/// A configured JavaScript sync function, run on JavaScriptCore (spec: sync-function.md §1–§6).
///
/// The source is a function expression, as in a configuration file's `sync`. It is compiled once per
/// JavaScriptCore context; a pool of contexts lets concurrent writes run the function in parallel, each call
/// borrowing one context (and waiting while all are busy). Each context has its own context group, so the time
/// limit applies per call. A batch of revisions (``evaluate(_:user:)``, a `_bulk_docs` request) crosses into
/// JavaScript once per ``batchLimit`` calls rather than once per call.
///
/// ```swift
/// let sync = try JavaScriptSyncFunction(source: """
///     function(doc, oldDoc) {
///       if (!doc.type) throw({forbidden: "type is required"});
///       requireUser(doc.owner);
///       channel("lists." + doc._id);
///       access(doc.owner, "lists." + doc._id);
///     }
///     """)
/// let user = SyncUserContext(name: "user1", roles: [], channels: ["!"])
/// let result = try sync.route(document: ["_id": "a", "type": "list", "owner": "user1"], oldDocument: nil, user: user)
/// result.channels  // ["lists.a"]
/// result.access    // ["user1": ["lists.a"]]
/// ```
///
/// Built-ins: `channel`, `access`, `role`, `expiry`, `reject`, `requireUser`, `requireRole`, `requireAccess` and
/// `requireAdmin` with Sync Gateway 1.x's messages (`wrong user`, `missing role`, `missing channel access`,
/// `admin required`), thrown as `{forbidden: message}` objects that the function may catch. The third argument,
/// `meta`, is `{"xattrs": {}}`.
///
/// Documents reach JavaScript through JSON, so integers beyond ±2^53 lose precision there (the stored document
/// keeps them exact; only what the function sees and computes from them is affected).
public final class JavaScriptSyncFunction: ChannelRouter {
    /// The function used when a database configures none (spec: sync-function.md §1.5).
    public static let defaultSource = "function(doc){channel(doc.channels);}"

    /// The source as configured.
    public let source: String
    /// The most contexts that run the function at once.
    public let poolSize: Int
    /// How long (in CPU time) one call may run before it is stopped with 500 `JS sync function timed out`.
    public let timeLimit: Duration
    /// How many bytes a context's heap may hold during a call before it is stopped with 500 `JS sync function
    /// exceeded its memory limit`; the default 64 MiB.
    public let memoryLimit: Int
    /// Where `console.log`/`info`/`warn`/`error` lines of the function go.
    public let console: SyncFunctionConsole

    /// The default ``memoryLimit``: 64 MiB.
    public static let defaultMemoryLimit = 64 << 20

    private let pool: SyncFunctionRunnerPool

    /// Compiles a sync function.
    ///
    /// - Parameters:
    ///   - source: A function expression, e.g. `function(doc, oldDoc) { channel(doc.channels); }`; surrounding
    ///     whitespace and comments are allowed.
    ///   - poolSize: The most calls that run in parallel (contexts are created as needed, up to this many).
    ///   - timeLimit: The longest (in CPU time) one call may run.
    ///   - memoryLimit: The most bytes a context's heap may hold during a call.
    ///   - console: Where the function's `console` lines go.
    /// - Throws: 400 `Invalid sync function: <error> (line N)` when the source does not compile or is not a
    ///   function; `N` counts lines of `source`.
    public init(
        source: String, poolSize: Int = ProcessInfo.processInfo.activeProcessorCount,
        timeLimit: Duration = .seconds(1), memoryLimit: Int = JavaScriptSyncFunction.defaultMemoryLimit,
        console: SyncFunctionConsole = .discard
    ) throws(GatewayError) {
        let script = SyncFunctionScript(source: source)
        let first: SyncFunctionRunner
        do {
            first = try SyncFunctionRunner(script: script, timeLimit: timeLimit, memoryLimit: memoryLimit)
        } catch {
            let line = error.line.map { " (line \(script.sourceLine($0)))" } ?? ""
            throw .invalidSyncFunction(error.message + line)
        }
        self.source = source
        self.poolSize = max(1, poolSize)
        self.timeLimit = timeLimit
        self.memoryLimit = memoryLimit
        self.console = console
        self.pool = SyncFunctionRunnerPool(size: poolSize, first: first) { () throws(JavaScriptException) in
            try SyncFunctionRunner(script: script, timeLimit: timeLimit, memoryLimit: memoryLimit)
        }
    }

    // MARK: - Running

    /// Runs the function for a new revision and reports the outcome with failure details for logs.
    ///
    /// - Parameters:
    ///   - document: The new revision's body with `_id`, `_rev` and `_deleted` when it is a tombstone.
    ///   - oldDocument: The parent revision's body with `_id`, nil when there is none (`oldDoc` is `null`).
    ///   - user: The user writing, or nil for admin and internal writes (every `require*` passes).
    public func evaluate(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) -> SyncFunctionOutcome {
        evaluate([RoutingRequest(document: document, oldDocument: oldDocument)], user: user)[0]
    }

    /// Runs the function for each revision of a batch one user writes, crossing into JavaScript once per
    /// ``batchLimit`` calls, and reports each outcome as ``evaluate(document:oldDocument:user:)`` would.
    ///
    /// The time and memory limits apply to each call. A call that runs past the time limit fails alone (the rest
    /// run again in a fresh context); when the heap grows past the memory limit, or a call throws, the calls
    /// concerned run again one by one, so that each outcome and its detail are the ones a single call gives.
    ///
    /// - Parameters:
    ///   - requests: The revisions and their parents.
    ///   - user: The user writing, or nil for admin and internal writes (every `require*` passes).
    /// - Returns: One outcome per request, in order.
    public func evaluate(_ requests: [RoutingRequest], user: SyncUserContext?) -> [SyncFunctionOutcome] {
        let userJSON = user.map(Self.json)
        let calls = requests.map(Self.json)
        var outcomes = [SyncFunctionOutcome?](repeating: nil, count: requests.count)
        var chunk: [Int] = []
        var chunkBytes = 0
        for (index, call) in calls.enumerated() {
            if !chunk.isEmpty, chunk.count == Self.batchLimit || chunkBytes + call.count > Self.batchBytesLimit {
                run(chunk, of: calls, user: userJSON, into: &outcomes)
                chunk.removeAll(keepingCapacity: true)
                chunkBytes = 0
            }
            chunk.append(index)
            chunkBytes += call.count
        }
        if !chunk.isEmpty { run(chunk, of: calls, user: userJSON, into: &outcomes) }
        return outcomes.map { $0 ?? .failed(.syncFunctionException, detail: "the sync function runtime skipped a call") }
    }

    /// The most calls one entry into JavaScript runs.
    static let batchLimit = 100
    /// The most bytes of documents one entry into JavaScript takes (more when a single call is larger).
    static let batchBytesLimit = 256 << 10

    /// Runs the calls at `indices` in one context and records their outcomes.
    private func run(
        _ indices: [Int], of calls: [[UInt8]], user: [UInt8]?, into outcomes: inout [SyncFunctionOutcome?]
    ) {
        let runner: SyncFunctionRunner
        do {
            runner = try pool.borrow()
        } catch {
            for index in indices {
                outcomes[index] = .failed(
                    .syncFunctionException, detail: "cannot start a JavaScript context: \(error.description)")
            }
            return
        }
        let result = runner.run(calls: Self.array(indices.map { calls[$0] }), user: user)
        let now = Date()
        switch result {
        case .timedOut(let call):
            pool.giveBack(runner, reusable: false)
            let stopped = indices[min(call, indices.count - 1)]
            outcomes[stopped] = .failed(.syncFunctionTimedOut, detail: "the sync function ran longer than \(timeLimit)")
            let rest = indices.filter { $0 != stopped }
            if !rest.isEmpty { run(rest, of: calls, user: user, into: &outcomes) }
        case .memoryExhausted:
            pool.giveBack(runner, reusable: false)
            guard indices.count > 1 else {
                outcomes[indices[0]] = .failed(
                    .syncFunctionOutOfMemory, detail: "the sync function's heap grew past \(memoryLimit >> 20) MiB")
                return
            }
            for index in indices { run([index], of: calls, user: user, into: &outcomes) }
        case .exception(let exception):
            pool.giveBack(runner, reusable: true)
            guard indices.count > 1 else {
                outcomes[indices[0]] = .failed(.syncFunctionException, detail: exception.description)
                return
            }
            for index in indices { run([index], of: calls, user: user, into: &outcomes) }
        case .outputs(let bytes):
            pool.giveBack(runner, reusable: true)
            guard let outputs = SyncFunctionOutputReader.read(bytes), outputs.count == indices.count else {
                for index in indices {
                    outcomes[index] = .failed(.syncFunctionException, detail: "the sync function's output is malformed")
                }
                return
            }
            var threw: [Int] = []
            for (index, output) in zip(indices, outputs) {
                switch output {
                case nil:
                    threw.append(index)
                case .success(let output):
                    for line in output.logs { console.write(line.level, line.message) }
                    outcomes[index] = output.outcome(now: now)
                case .failure(let error):
                    outcomes[index] = .failed(.syncFunctionException, detail: error.description)
                }
            }
            // A call that threw runs again alone, which lets its exception out with its text and line.
            for index in threw { run([index], of: calls, user: user, into: &outcomes) }
        }
    }

    /// Runs the function for a new revision (``ChannelRouter``).
    ///
    /// - Throws: 403 for `throw({forbidden})` and failed `require*`, 401 for `throw({unauthorized})`, the status
    ///   given to `reject()`, 500 for exceptions, time-outs and invalid names (spec: sync-function.md §4).
    public func route(document: JSONValue, oldDocument: JSONValue?, user: SyncUserContext?) throws(GatewayError)
        -> RoutingResult
    {
        try evaluate(document: document, oldDocument: oldDocument, user: user).result.get()
    }

    /// Routes a batch with one entry into JavaScript per ``batchLimit`` calls (``ChannelRouter``).
    public func route(batch: [RoutingRequest], user: SyncUserContext?) -> [Result<RoutingResult, GatewayError>] {
        evaluate(batch, user: user).map(\.result)
    }

    /// How many JavaScriptCore contexts exist now (idle or running), at most ``poolSize``.
    var contextCount: Int { pool.runnerCount }

    // MARK: - Helpers

    /// A call as the wrapper expects it, `[doc, oldDoc]`.
    private static func json(_ request: RoutingRequest) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes += request.document.serialized()
        bytes.append(UInt8(ascii: ","))
        bytes += request.oldDocument?.serialized() ?? Array("null".utf8)
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    /// The JSON array of elements already serialized.
    private static func array(_ elements: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(elements.reduce(2) { $0 + $1.count + 1 })
        for (offset, element) in elements.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += element
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    /// The user context the wrapper expects, `{"name", "roles": […], "channels": […]}`.
    private static func json(_ user: SyncUserContext) -> [UInt8] {
        let value: JSONValue = .object([
            "name": .string(user.name),
            "roles": .array(user.roles.map(JSONValue.string)),
            "channels": .array(user.channels.map(JSONValue.string)),
        ])
        return value.serialized()
    }
}
