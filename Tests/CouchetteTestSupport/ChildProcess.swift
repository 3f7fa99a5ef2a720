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

    /// The running program.
    public let process = Process()
    private let condition = NSCondition()
    private var collected = Data()  // guarded by `condition`
    private var collectedErrors = Data()  // guarded by `condition`
    private var openPipes = 1  // guarded by `condition`
    private var outputEnded = false  // guarded by `condition`
    private var exited = false  // guarded by `condition`
    private let name: String

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameter separateErrors: Keep standard error out of ``output`` (in ``errors``); by default the two are
    ///   collected together, in the order they come.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, separateErrors: Bool = false
    ) throws {
        name = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil }
            self?.received(chunk, isError: false)
        }
        if separateErrors {
            openPipes = 2
            let errorPipe = Pipe()
            process.standardError = errorPipe
            errorPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let chunk = handle.availableData
                if chunk.isEmpty { handle.readabilityHandler = nil }
                self?.received(chunk, isError: true)
            }
        }
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            condition.withLock {
                exited = true
                condition.broadcast()
            }
        }
        try process.run()
    }

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
        return process.terminationStatus
    }

    /// Sends SIGKILL and waits (bounded) for the child to go.
    public func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = condition.withLock {
            let deadline = Date().addingTimeInterval(30)
            while !exited { if !condition.wait(until: deadline) { return false } }
            return true
        }
    }

    /// Sends SIGTERM and waits for the child to exit; after `limit` it is killed instead.
    public func terminate(within limit: Duration = .seconds(30)) {
        guard process.isRunning else { return }
        process.terminate()
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
