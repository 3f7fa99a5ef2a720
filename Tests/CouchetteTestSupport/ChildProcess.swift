import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - ChildProcess

/// A program run by a test: its output collected as it comes, every wait bounded, so a child that hangs or stays
/// silent fails the test with what it printed instead of blocking it.
///
/// ```swift
/// let child = try ChildProcess(ChildProcess.builtProduct("couchette"), ["stress-save", "--directory", path])
/// let log = try child.waitForOutput(within: .seconds(60)) { $0.filter { $0 == "\n" }.count >= 1_000 }
/// child.kill()
/// ```
public final class ChildProcess: @unchecked Sendable {
    /// Thrown when a wait runs out or the child ends too early.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The child's process ID.
    public let processIdentifier: pid_t
    private let condition = NSCondition()
    private var collected = Data()  // guarded by `condition`
    private var collectedErrors = Data()  // guarded by `condition`
    private var openPipes = 1  // guarded by `condition`
    private var outputEnded = false  // guarded by `condition`
    private var exited = false  // guarded by `condition`
    private var status: Int32 = 0  // guarded by `condition`: the exit code, or the signal that ended it
    private var signalled = false  // guarded by `condition`
    private let name: String

    /// Starts `executable` with `arguments`.
    ///
    /// The child is spawned with `posix_spawn`; threads of this object read its output with blocking reads and
    /// reap it with `waitpid`. (Foundation's `Process` and `FileHandle.readabilityHandler`, built on Dispatch
    /// sources, crashed libdispatch's event loop on Linux when many tests started and stopped children at once.)
    /// The pipes are close-on-exec, so children started later by other tests do not hold them open.
    ///
    /// - Parameter separateErrors: Keep standard error out of ``output`` (in ``errors``); by default the two are
    ///   collected together, in the order they come.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, separateErrors: Bool = false
    ) throws {
        name = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        var output: [Int32] = [-1, -1]
        var errorOutput: [Int32] = [-1, -1]
        guard Self.closeOnExecPipe(&output) else { throw Failure(description: "pipe() failed") }
        if separateErrors, !Self.closeOnExecPipe(&errorOutput) {
            close(output[0])
            close(output[1])
            throw Failure(description: "pipe() failed")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, separateErrors ? errorOutput[1] : output[1], 2)
        // Nothing else of the test process goes to the child: a long-lived one (tmux's server, a gateway) holding a
        // copy of another test's socket would keep that connection open after the other test's server closed it.
        Self.closeFrom?(&actions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environmentStrings.map { $0.map { strdup($0) } + [nil] }
        defer { envp?.forEach { free($0) } }
        // The child starts with no signal blocked and every signal's default action: a child inherits the spawning
        // thread's mask, and the runtime's threads block nearly all signals, so a tmux server spawned from one could
        // not hang up its panes and outlived `kill-server`, and a server told to stop by SIGTERM never heard it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = envp.map { envp in posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp) }
            ?? posix_spawn(&pid, executable.path, &actions, &attributes, argv, environ)
        close(output[1])
        if separateErrors { close(errorOutput[1]) }
        guard spawned == 0 else {
            close(output[0])
            if separateErrors { close(errorOutput[0]) }
            throw Failure(description: "cannot start \(executable.path): error \(spawned)")
        }
        processIdentifier = pid
        if separateErrors { openPipes = 2 }
        startReading(output[0], isError: false)
        if separateErrors { startReading(errorOutput[0], isError: true) }
        let child = pid
        let reaper = Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1, errno == EINTR {}
            condition.withLock {
                // WIFSIGNALED / WTERMSIG / WEXITSTATUS, spelled out (the macros do not import).
                let signal = status & 0x7f
                signalled = signal != 0 && signal != 0x7f
                self.status = signalled ? signal : (status >> 8) & 0xff
                exited = true
                condition.broadcast()
            }
        }
        reaper.start()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Glibc's module does not export.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return nil
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// A pipe whose ends are closed in children (`pipe2(O_CLOEXEC)`, which Glibc's module does not export).
    private static func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Reads `descriptor` to its end on a thread of its own.
    private func startReading(_ descriptor: Int32, isError: Bool) {
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    received(Data(buffer[0..<count]), isError: isError)
                } else if count == -1, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
            received(Data(), isError: isError)
        }.start()
    }

    /// Whether the child is still running.
    public var isRunning: Bool { condition.withLock { !exited } }

    /// Whether the child was ended by a signal (SIGKILL, a crash), once it has exited.
    public var wasKilledBySignal: Bool { condition.withLock { signalled } }

    /// Runs a command looked up in `PATH` to its end and returns what it printed; throws when it fails or outlives
    /// `limit`.
    public static func run(_ command: [String], within limit: Duration = .seconds(300)) throws -> String {
        let child = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"), command, separateErrors: true)
        let status = try child.waitForExit(within: limit)
        guard status == 0 else {
            throw Failure(description: "\(child.name) exited with \(status): \(child.errors)\(child.output)")
        }
        return child.output
    }

    /// Everything the child printed so far.
    public var output: String {
        condition.withLock { String(decoding: collected, as: UTF8.self) }
    }

    /// What the child printed on standard error, when started with `separateErrors`.
    public var errors: String {
        condition.withLock { String(decoding: collectedErrors, as: UTF8.self) }
    }

    /// Waits until what the child printed satisfies `isEnough`, and returns it; throws when the child's output
    /// ends first or `limit` passes (the child is left running: kill it).
    @discardableResult
    public func waitForOutput(within limit: Duration = .seconds(60), until isEnough: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(Self.seconds(limit))
        return try condition.withLock {
            while true {
                let text = String(decoding: collected, as: UTF8.self)
                if isEnough(text) { return text }
                if outputEnded { throw Failure(description: "\(name) stopped printing early: \(text.suffix(2_000))") }
                if !condition.wait(until: deadline) {
                    throw Failure(description: "\(name) printed too little within \(limit): \(text.suffix(2_000))")
                }
            }
        }
    }

    /// Waits for the child to exit and returns its status; after `limit` it is killed and the wait throws.
    @discardableResult
    public func waitForExit(within limit: Duration = .seconds(60)) throws -> Int32 {
        let deadline = Date().addingTimeInterval(Self.seconds(limit))
        let finished = condition.withLock {
            while !exited {
                if !condition.wait(until: deadline) { return false }
            }
            // The rest of its output: until the pipe ends, or a short while when another child spawned meanwhile
            // inherited the pipe's write end (it then ends only when that child does).
            let drained = Date().addingTimeInterval(5)
            while openPipes > 0 {
                if !condition.wait(until: drained) { break }
            }
            return true
        }
        guard finished else {
            kill()
            throw Failure(description: "\(name) did not exit within \(limit): \(output.suffix(2_000))")
        }
        return condition.withLock { status }
    }

    // MARK: - Waiting from async code

    /// ``run(_:within:)`` for async callers: the wait happens on a thread of its own. A blocking wait on one of
    /// Swift's cooperative threads (as many as cores) would hold it while the child talks to a server of this same
    /// process, whose handlers need those threads: two such waits at once stall every test in the process.
    public static func run(_ command: [String], within limit: Duration = .seconds(300)) async throws -> String {
        try await offCooperativeThreads { try run(command, within: limit) }
    }

    /// ``waitForOutput(within:until:)`` for async callers, waiting on a thread of its own (see ``run(_:within:)``).
    @discardableResult
    public func waitForOutput(
        within limit: Duration = .seconds(60), until isEnough: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await offCooperativeThreads { try self.waitForOutput(within: limit, until: isEnough) }
    }

    /// ``waitForExit(within:)`` for async callers, waiting on a thread of its own (see ``run(_:within:)``).
    @discardableResult
    public func waitForExit(within limit: Duration = .seconds(60)) async throws -> Int32 {
        try await offCooperativeThreads { try self.waitForExit(within: limit) }
    }

    /// Sends SIGKILL and waits (bounded) for the child to go.
    public func kill() {
        guard isRunning else { return }
        Glibc.kill(processIdentifier, SIGKILL)
        _ = condition.withLock {
            let deadline = Date().addingTimeInterval(30)
            while !exited { if !condition.wait(until: deadline) { return false } }
            return true
        }
    }

    /// Sends SIGTERM and waits for the child to exit; after `limit` it is killed instead.
    public func terminate(within limit: Duration = .seconds(30)) {
        guard isRunning else { return }
        Glibc.kill(processIdentifier, SIGTERM)
        _ = try? waitForExit(within: limit)
    }

    /// A product of this package built next to the test bundle (`make test` builds every product first).
    public static func builtProduct(_ name: String) throws -> URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw Failure(description: "\(name) is not built next to \(testBinary.path); run `swift build` first")
    }

    private func received(_ chunk: Data, isError: Bool) {
        condition.withLock {
            if chunk.isEmpty {
                openPipes -= 1
                if !isError { outputEnded = true }
            } else if isError {
                collectedErrors.append(chunk)
            } else {
                collected.append(chunk)
            }
            condition.broadcast()
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
