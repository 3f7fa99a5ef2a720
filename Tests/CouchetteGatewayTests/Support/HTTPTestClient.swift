import AsyncHTTPClient
import CouchetteCore
import Foundation
import NIOCore
import NIOHTTP1

// MARK: - HTTPTestClient

/// A real-socket HTTP client for end-to-end tests, over AsyncHTTPClient, talking to `127.0.0.1`.
///
/// ```swift
/// let reply = try await client.send("PUT", port: ports.adminPort, path: "/todo/doc1", json: ["a": 1])
/// #expect(reply.status == 201)
/// #expect(try reply.jsonValue()["ok"] == true)
/// ```
struct HTTPTestClient: Sendable {
    // MARK: - Response

    /// A received response.
    struct Reply: Sendable {
        let status: Int
        let headers: [String: String]
        let body: Data

        /// A header, case-insensitively (repeated headers joined by ", ").
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }

        /// The body parsed as a JSON object (Foundation form).
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: body)
            guard let dictionary = object as? [String: Any] else {
                throw URLError(.cannotParseResponse)
            }
            return dictionary
        }

        /// The body parsed as a ``JSONValue``.
        func jsonValue() throws -> JSONValue {
            try JSONValue(parsing: [UInt8](body))
        }

        /// The body as UTF-8 text.
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    // MARK: - Properties

    /// The underlying client; shut down by ``close()``.
    let http: HTTPClient

    // MARK: - Lifecycle

    /// - Parameter connections: How many requests may be in flight to one port at once (AsyncHTTPClient's default
    ///   is 8; the others wait in the client).
    init(connections: Int = 8) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.decompression = .disabled
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Shuts the client down.
    func close() {
        try? http.syncShutdown()
    }

    // MARK: - Requests

    /// Sends a request to `http://127.0.0.1:<port><path>`.
    ///
    /// - Parameters:
    ///   - headers: Extra headers, e.g. `["Content-Type": "application/json"]`.
    ///   - body: Raw body bytes.
    ///   - user: Basic credentials `(name, password)`.
    func send(
        _ method: String = "GET", port: Int, path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        user: (String, String)? = nil
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let (name, password) = user {
            let token = Data("\(name):\(password)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(token)")
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await http.execute(request, timeout: .seconds(30))
        var collected = try await response.body.collect(upTo: 256 << 20)
        var fields: [String: String] = [:]
        for header in response.headers {
            fields[header.name] = fields[header.name].map { "\($0), \(header.value)" } ?? header.value
        }
        return Reply(
            status: Int(response.status.code), headers: fields,
            body: Data(collected.readBytes(length: collected.readableBytes) ?? []))
    }

    /// Sends a JSON body with `Content-Type: application/json`.
    func send(
        _ method: String, port: Int, path: String, json: JSONValue, headers: [String: String] = [:],
        user: (String, String)? = nil
    ) async throws -> Reply {
        var allHeaders = headers
        allHeaders["Content-Type"] = "application/json"
        return try await send(method, port: port, path: path, headers: allHeaders, body: json.serialized(), user: user)
    }
}
