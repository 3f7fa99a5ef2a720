import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Keep-alive connections left idle after one `GET /` each, opened with plain sockets (whose client side takes
/// no heap in this process): the server's memory per connection that serves no feed, against which a feed's is read.
final class IdleConnections: @unchecked Sendable {
    private var sockets: [Int32] = []

    /// Opens `count` connections to the loopback `port`, each answered once; on a thread of its own (the reads block).
    static func open(count: Int, port: Int) async throws -> IdleConnections {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                let connections = IdleConnections()
                do {
                    for _ in 0..<count { connections.sockets.append(try connect(port: port)) }
                    for socket in connections.sockets { try readAnswer(socket) }
                    continuation.resume(returning: connections)
                } catch {
                    connections.close()
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }

    /// Closes every connection.
    func close() {
        for socket in sockets { Glibc.close(socket) }
        sockets = []
    }

    /// A connection that has sent `GET /`.
    private static func connect(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ChangesBenchmark.Failure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            throw ChangesBenchmark.Failure("connect: errno \(errno)")
        }
        let request = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard write(socket, request, request.count) == request.count else {
            Glibc.close(socket)
            throw ChangesBenchmark.Failure("write: errno \(errno)")
        }
        return socket
    }

    /// Reads one answer: its head, then `Content-Length` bytes of body.
    private static func readAnswer(_ socket: Int32) throws {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = read(socket, &buffer, buffer.count)
            guard count > 0 else { throw ChangesBenchmark.Failure("the server closed an idle connection") }
            received += buffer[0..<count]
            let text = String(decoding: received, as: UTF8.self)
            guard let headEnd = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<headEnd.lowerBound].lowercased()
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if text.utf8.distance(from: headEnd.upperBound, to: text.endIndex) >= length { return }
        }
    }
}
