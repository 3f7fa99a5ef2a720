import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: - freeLoopbackPort

/// A loopback port nothing listens on now (the kernel's choice for a socket bound to port 0), for servers the tests
/// start as processes of their own.
public func freeLoopbackPort() throws -> Int {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socketFD >= 0 else { throw ChildProcess.Failure(description: "socket() failed") }
    defer { close(socketFD) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(socketFD, socketAddress, length) == 0 && getsockname(socketFD, socketAddress, &length) == 0
        }
    }
    guard bound else { throw ChildProcess.Failure(description: "bind() to a free port failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}
