import Foundation
import Glibc
import Synchronization

// MARK: - ChaosProxy

/// A TCP proxy on loopback that forwards every connection to `targetPort` and cuts connections at random: after
/// each chunk it forwards, with probability `cutProbability`, both sides of the connection are shut down — mid
/// request or mid response, as a flaky network does.
///
/// The cuts come from ``seed``: each direction of the n-th connection draws from its own ``SplitMix64`` seeded from
/// it, so a failing run's seed (`COUCHETTE_CHAOS_SEED`) replays the same decisions for the same traffic. With
/// `cutProbability` 0 it only counts the bytes (the benchmarks' bytes-on-the-wire figures).
///
/// With a `delay`, each chunk is forwarded that long after it arrived, each way: a server a round trip of twice the
/// delay away (latency, not bandwidth: chunks read meanwhile are in flight together, so a large statement costs one
/// delay, not one per chunk), for a protocol that waits for each answer (PostgreSQL's extended queries; the
/// benchmarks' `postgres.*.rtt5`).
public final class ChaosProxy: Sendable {
    /// The seed of this proxy's cuts.
    public let seed: UInt64
    /// The port clients connect to.
    public let port: UInt16
    private let listener: Int32
    private let targetPort: UInt16
    private let cutProbability: Double
    private let delayMicroseconds: UInt32
    private let isStopped = Atomic<Bool>(false)
    private let cutCount = Atomic<Int>(0)
    private let connectionCount = Atomic<UInt64>(0)
    private let downstreamCount = Atomic<Int>(0)
    private let gate = HoldGate()

    /// Stops forwarding, both ways, on every connection (chunks read meanwhile wait): a server that stopped answering,
    /// its connections still open.
    public func hold() { gate.set(holding: true) }

    /// Forwards again what ``hold()`` kept, and what comes after.
    public func release() { gate.set(holding: false) }

    /// Blocks until, while holding, chunks wait on `count` directions of connections (each a request sent to the
    /// server and kept), or until ``release()``.
    public func waitUntilHolding(_ count: Int) { gate.waitUntilWaiting(count) }

    /// How many connections were cut so far.
    public var cuts: Int { cutCount.load(ordering: .relaxed) }

    /// The bytes forwarded from the server to clients so far.
    public var bytesToClients: Int { downstreamCount.load(ordering: .relaxed) }

    /// - Parameters:
    ///   - seed: The seed of the cuts; by default `COUCHETTE_CHAOS_SEED`, or a random one.
    ///   - delay: How long each chunk waits before it is forwarded, each way.
    public init(targetPort: Int, cutProbability: Double, seed: UInt64? = nil, delay: Duration = .zero) throws {
        let (seconds, attoseconds) = delay.components
        delayMicroseconds = UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        self.seed =
            seed ?? ProcessInfo.processInfo.environment["COUCHETTE_CHAOS_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        self.targetPort = UInt16(targetPort)
        self.cutProbability = cutProbability
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 64) == 0
                    && getsockname(listener, socketAddress, &length) == 0
            }
        }
        guard listener >= 0, listening else { throw POSIXError(.EADDRNOTAVAIL) }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting connections (open ones end when either side closes or is cut).
    public func stop() {
        isStopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    // MARK: - Forwarding

    private func acceptLoop() {
        while !isStopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                close(client)
                close(server)
                continue
            }
            var noDelay: Int32 = 1  // no Nagle stalls: forwarded chunks go out at once
            for descriptor in [client, server] {
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            }
            let connection = Connection(client: client, server: server)
            let index = connectionCount.add(1, ordering: .relaxed).oldValue
            let upstream = SplitMix64(state: seed &+ index &* 2)
            let downstream = SplitMix64(state: seed &+ index &* 2 &+ 1)
            Thread.detachNewThread { [self] in pump(from: client, to: server, connection, random: upstream) }
            Thread.detachNewThread { [self] in
                pump(from: server, to: client, connection, random: downstream, counts: true)
            }
        }
    }

    private func pump(
        from source: Int32, to destination: Int32, _ connection: Connection, random: SplitMix64,
        counts: Bool = false
    ) {
        var random = random
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let delayed = delayMicroseconds > 0 ? DelayLine(delayMicroseconds: delayMicroseconds) : nil
        if let delayed {
            Thread.detachNewThread {
                while let chunk = delayed.next() {
                    guard Self.writeAll(chunk, to: destination) else { break }
                }
                connection.end()
            }
        }
        defer { delayed?.close() }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if counts { downstreamCount.add(count, ordering: .relaxed) }
            gate.waitWhileHolding()
            if let delayed {
                delayed.send(Array(buffer[0..<count]))
            } else if !Self.writeAll(buffer[0..<count], to: destination) {
                break
            }
            if Double.random(in: 0..<1, using: &random) < cutProbability {
                cutCount.add(1, ordering: .relaxed)
                break
            }
        }
        if delayed == nil { connection.end() }
    }

    /// Writes every byte of `bytes`; false when the connection is gone.
    private static func writeAll(_ bytes: some Collection<UInt8>, to destination: Int32) -> Bool {
        let bytes = Array(bytes)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(destination, $0.baseAddress! + written, bytes.count - written) }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    /// Chunks in flight one way, each handed on `delayMicroseconds` after it was sent.
    private final class DelayLine: @unchecked Sendable {
        private let delay: Duration
        private let condition = NSCondition()
        // Guarded by `condition`:
        private var chunks: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
        private var closed = false

        init(delayMicroseconds: UInt32) { delay = .microseconds(Int64(delayMicroseconds)) }

        func send(_ bytes: [UInt8]) {
            condition.withLock {
                chunks.append((.now + delay, bytes))
                condition.signal()
            }
        }

        /// Ends the line once the chunks in it are handed on.
        func close() {
            condition.withLock {
                closed = true
                condition.signal()
            }
        }

        /// The next chunk once it is due; nil when the line is closed and empty.
        func next() -> [UInt8]? {
            condition.lock()
            defer { condition.unlock() }
            while chunks.isEmpty {
                if closed { return nil }
                condition.wait()
            }
            let chunk = chunks.removeFirst()
            condition.unlock()
            let wait = chunk.due - .now
            if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds)) }
            condition.lock()
            return chunk.bytes
        }
    }

    /// Both sockets of one proxied connection, closed once.
    private final class Connection: Sendable {
        let client: Int32
        let server: Int32
        private let ended = Atomic<Int>(0)

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        /// Shuts both sides down (waking the other pump); the second call closes the descriptors.
        func end() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            if ended.add(1, ordering: .relaxed).newValue == 2 {
                close(client)
                close(server)
            }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }
}

// MARK: - HoldGate

/// Whether a ``ChaosProxy`` holds its traffic, with a wait for the moment it no longer does.
private final class HoldGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var holding = false  // guarded by `condition`
    private var waiting = 0  // guarded by `condition`

    func set(holding: Bool) {
        condition.withLock {
            self.holding = holding
            condition.broadcast()
        }
    }

    func waitWhileHolding() {
        condition.withLock {
            guard holding else { return }
            waiting += 1
            condition.broadcast()
            while holding { condition.wait() }
            waiting -= 1
        }
    }

    /// Waits until `count` pumps wait while holding, or holding ends.
    func waitUntilWaiting(_ count: Int) {
        condition.withLock {
            while holding && waiting < count { condition.wait() }
        }
    }
}
