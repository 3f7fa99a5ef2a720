import AsyncHTTPClient
import CouchetteCore
import Foundation
import NIOCore
import NIOHTTP1

// MARK: - StreamingResponse

/// An HTTP response read as it arrives, for feeds that never end on their own: line by line (continuous feeds,
/// heartbeats) or to the end.
///
/// ```swift
/// let feed = try await StreamingResponse.open(client, port: ports.adminPort, path: "/todo/_changes?feed=continuous")
/// let line = try await feed.nextLine()  // "" for a heartbeat, nil at the end of the body
/// ```
///
/// Use it inside ``withDeadline(_:_:_:)`` so a feed that never answers fails the test instead of hanging.
final class StreamingResponse {
    // MARK: - Properties

    /// The status code.
    let status: Int

    /// The response headers.
    let headers: HTTPHeaders

    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private var pending: [UInt8] = []
    private var ended = false

    private init(response: HTTPClientResponse) {
        status = Int(response.status.code)
        headers = response.headers
        iterator = response.body.makeAsyncIterator()
    }

    // MARK: - Opening

    /// Sends a request and returns once the response head arrived.
    static func open(
        _ client: HTTPTestClient, _ method: String = "GET", port: Int, path: String, json: JSONValue? = nil,
        user: (String, String)? = nil
    ) async throws -> StreamingResponse {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = HTTPMethod(rawValue: method)
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: json.serialized()))
        }
        if let (name, password) = user {
            let token = Data("\(name):\(password)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(token)")
        }
        let response = try await client.http.execute(request, timeout: .seconds(120))
        return StreamingResponse(response: response)
    }

    // MARK: - Reading

    /// The next line without its `\n`: `""` for a heartbeat; nil once the body ended (a last unterminated
    /// fragment is returned first).
    func nextLine() async throws -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            if ended {
                guard !pending.isEmpty else { return nil }
                defer { pending.removeAll() }
                return String(decoding: pending, as: UTF8.self)
            }
            try await receive()
        }
    }

    /// Reads lines until one satisfies `predicate`, and returns every line read (that one included).
    ///
    /// - Throws: ``StreamingError/endedEarly`` if the body ends first.
    func lines(until predicate: (String) -> Bool) async throws -> [String] {
        var lines: [String] = []
        while let line = try await nextLine() {
            lines.append(line)
            if predicate(line) { return lines }
        }
        throw StreamingError.endedEarly(lines)
    }

    /// The rest of the body.
    func readToEnd() async throws -> String {
        while !ended { try await receive() }
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    /// Reads until `text` was received (or the body ended), and returns everything received so far, unconsumed.
    func peek(until text: String) async throws -> String {
        while !ended, !String(decoding: pending, as: UTF8.self).contains(text) { try await receive() }
        return String(decoding: pending, as: UTF8.self)
    }

    private func receive() async throws {
        guard var chunk = try await iterator.next() else {
            ended = true
            return
        }
        pending += chunk.readBytes(length: chunk.readableBytes) ?? []
    }
}

// MARK: - StreamingError

/// Failures of streaming reads in tests.
enum StreamingError: Error, CustomStringConvertible {
    /// The body ended before the expected line; the lines read so far.
    case endedEarly([String])

    var description: String {
        switch self {
        case .endedEarly(let lines): "The body ended early after \(lines)"
        }
    }
}
