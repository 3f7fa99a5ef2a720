import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - RawConnection

/// A TCP connection to a loopback port that sends exactly the bytes it is given: for requests no HTTP client
/// would send (malformed request lines, control bytes, half-sent heads, stalled bodies).
///
/// Every read is bounded: ``readUntilClosed(within:)`` answers with what arrived and whether the server closed
/// the connection before the deadline, so a server that never answers fails the test instead of hanging it.
/// Blocking calls run on a Dispatch queue, never on Swift's cooperative pool.
///
/// ```swift
/// let connection = try RawConnection(port: ports.publicPort)
/// try connection.send("GET /\u{FF} HTTP/1.1\r\nHost: x\r\n\r\n")
/// let reply = await connection.readUntilClosed(within: .seconds(10))
/// #expect(reply.closed && reply.text.hasPrefix("HTTP/1.1 400"))
/// ```
public final class RawConnection: @unchecked Sendable {
    /// What a read returned.
    public struct Reply: Sendable {
        /// The bytes received.
        public var bytes: [UInt8]
        /// Whether the server closed the connection (end of stream or reset) before the deadline.
        public var closed: Bool

        /// The bytes as text (lossy).
        public var text: String { String(decoding: bytes, as: UTF8.self) }

        /// The status code of the first response line, if one arrived.
        public var status: Int? {
            let line = text.prefix { $0 != "\r" && $0 != "\n" }
            let parts = line.split(separator: " ")
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return nil }
            return Int(parts[1])
        }
    }

    /// Errors of the socket calls.
    public struct SocketError: Error, CustomStringConvertible {
        public let description: String
    }

    private let descriptor: Int32
    private let queue = DispatchQueue(label: "couchette.tests.raw-connection")

    /// Connects to `127.0.0.1:port`; with `receiveBuffer`, the socket's receive buffer is that small (set before
    /// connecting, so the window the server sees stays small: a slow client).
    public init(port: Int, receiveBuffer: Int32? = nil) throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw SocketError(description: "socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socketDescriptor)
            throw SocketError(description: "connect to port \(port): errno \(errno)")
        }
        descriptor = socketDescriptor
    }

    deinit {
        close(descriptor)
    }

    // MARK: - Writing

    /// Sends text as UTF-8.
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends bytes; a server that closed the connection already may make this fail (EPIPE, ECONNRESET).
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw SocketError(description: "send: errno \(errno)") }
            offset += written
        }
    }

    // MARK: - Reading

    /// Reads until the server closes the connection or `timeout` passes.
    public func readUntilClosed(within timeout: Duration) async -> Reply {
        await read(within: timeout) { _ in false }
    }

    /// Reads until `done` holds for the bytes so far, the server closes, or `timeout` passes.
    public func read(within timeout: Duration, until done: @escaping @Sendable ([UInt8]) -> Bool) async -> Reply {
        let descriptor = descriptor
        return await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Self.blockingRead(descriptor, timeout: timeout, until: done))
            }
        }
    }

    private static func blockingRead(
        _ descriptor: Int32, timeout: Duration, until done: ([UInt8]) -> Bool
    ) -> Reply {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            if done(received) { return Reply(bytes: received, closed: false) }
            let remaining = ContinuousClock.now.duration(to: deadline)
            let milliseconds = max(1, Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return Reply(bytes: received, closed: true) }
            received += chunk[..<count]
        }
        return Reply(bytes: received, closed: false)
    }
}
