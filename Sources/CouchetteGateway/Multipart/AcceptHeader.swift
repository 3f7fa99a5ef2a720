import CouchetteCore
// MARK: - AcceptHeader

/// What a request's `Accept` header allows among the gateway's response formats, JSON and multipart
/// (spec: gateway-rest-api.md §1.5). An absent header accepts everything; ranges with `q=0` are refused.
///
/// ```swift
/// let accept = AcceptHeader("multipart/related, application/json;q=0.9")
/// accept.allowsJSON          // true
/// accept.namesMultipart      // true
/// try AcceptHeader("text/html").requireJSONOrMultipart()   // 406
/// ```
struct AcceptHeader: Sendable, Hashable {
    /// The accepted media ranges, lowercased, without parameters; nil when the header is absent.
    let ranges: [String]?

    /// Reads an `Accept` header value (nil when absent).
    init(_ header: String?) {
        guard let header else {
            ranges = nil
            return
        }
        ranges = header.split(separator: ",").compactMap { item in
            let value = HeaderValue(parsing: String(item))
            if let quality = value.parameters["q"].flatMap(Double.init), quality <= 0 { return nil }
            return value.mediaType
        }
    }

    /// Whether JSON is acceptable: no header, `application/json`, `application/*` or `*/*`.
    var allowsJSON: Bool {
        guard let ranges else { return true }
        return ranges.contains { $0 == "application/json" || $0 == "application/*" || $0 == "*/*" }
    }

    /// Whether the header names JSON itself (`application/json`).
    var namesJSON: Bool { ranges?.contains("application/json") ?? false }

    /// Whether the header names a multipart type (`multipart/…`).
    var namesMultipart: Bool { ranges?.contains { $0.hasPrefix("multipart/") } ?? false }

    /// Whether multipart is acceptable: no header, `multipart/…` or `*/*`.
    var allowsMultipart: Bool {
        guard let ranges else { return true }
        return namesMultipart || ranges.contains("*/*")
    }

    /// Throws 406 when neither JSON nor multipart is acceptable.
    func requireJSONOrMultipart() throws(GatewayError) {
        guard allowsJSON || allowsMultipart else {
            throw GatewayError.notAcceptable()
        }
    }
}
