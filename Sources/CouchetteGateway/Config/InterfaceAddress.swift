// MARK: - InterfaceAddress

/// A listen address, `host:port`, as written in the `interface` and `adminInterface` keys.
///
/// ```swift
/// try InterfaceAddress(parsing: ":4984")           // 0.0.0.0:4984 (all interfaces)
/// try InterfaceAddress(parsing: "127.0.0.1:4985")  // loopback only
/// try InterfaceAddress(parsing: "[::1]:4985")      // IPv6 loopback
/// try InterfaceAddress(parsing: "4984")            // a bare port: all interfaces
/// ```
///
/// Spec: gateway-rest-api.md §1.1, §17.1.
public struct InterfaceAddress: Sendable, Hashable, CustomStringConvertible {
    // MARK: - Properties

    /// The host name or IP address to bind, e.g. `"0.0.0.0"`, `"127.0.0.1"`, `"::1"`, `"localhost"`.
    public var host: String

    /// The TCP port; `0` asks the system for a free port.
    public var port: Int

    // MARK: - Defaults

    /// The default public interface, `:4984` (all interfaces).
    public static let defaultPublic = InterfaceAddress(host: "0.0.0.0", port: 4984)

    /// The default admin interface, `127.0.0.1:4985` (loopback only).
    public static let defaultAdmin = InterfaceAddress(host: "127.0.0.1", port: 4985)

    // MARK: - Initialisers

    /// Creates an address from a host and a port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, `:port`, `[ipv6]:port` or a bare `port`.
    ///
    /// - Parameters:
    ///   - text: The address text.
    ///   - field: The configuration field it comes from, named in errors.
    /// - Throws: ``GatewayError/invalidConfig(field:problem:)`` naming `field`.
    public init(parsing text: String, field: String = "interface") throws(GatewayError) {
        let trimmed = text.trimmingWhitespace()
        func invalid(_ problem: String) -> GatewayError {
            .invalidConfig(field: field, problem: "invalid address \"\(text)\": \(problem)")
        }
        guard !trimmed.isEmpty else { throw invalid("expected host:port") }

        var host: Substring
        var portText: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw invalid("missing ']' after IPv6 address") }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid("expected ':port' after ']'") }
            portText = rest.dropFirst()
            guard !host.isEmpty else { throw invalid("empty IPv6 address") }
        } else if let colon = trimmed.lastIndex(of: ":") {
            host = trimmed[..<colon]
            portText = trimmed[trimmed.index(after: colon)...]
            if host.contains(":") { throw invalid("IPv6 addresses must be written in brackets, e.g. [::1]:4985") }
        } else {
            host = ""
            portText = trimmed[...]
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw invalid("expected a port number between 0 and 65535")
        }
        if host.contains(where: { $0 == " " || $0 == "/" }) { throw invalid("invalid host") }
        self.host = host.isEmpty ? "0.0.0.0" : String(host)
        self.port = port
    }

    // MARK: - Description

    /// `host:port`, with IPv6 hosts in brackets.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

// MARK: - String helpers

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
