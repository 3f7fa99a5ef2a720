import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// MARK: - HTTPTestClient

/// A small real-socket HTTP client for end-to-end tests, over `URLSession`.
struct HTTPTestClient {
    // MARK: - Response

    /// A received response.
    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: Data

        /// A header, case-insensitively.
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }

        /// The body parsed as a JSON object.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: body)
            guard let dictionary = object as? [String: Any] else {
                throw URLError(.cannotParseResponse)
            }
            return dictionary
        }
    }

    // MARK: - Properties

    private let session: URLSession

    // MARK: - Lifecycle

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        session = URLSession(configuration: configuration)
    }

    /// Cancels outstanding tasks and releases the session.
    func close() {
        session.invalidateAndCancel()
    }

    // MARK: - Requests

    /// Sends a request to `http://127.0.0.1:<port><path>`.
    func send(_ method: String = "GET", port: Int, path: String) async throws -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            headers[String(describing: key)] = String(describing: value)
        }
        return Reply(status: http.statusCode, headers: headers, body: data)
    }
}
