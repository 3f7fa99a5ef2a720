import HTTPTypes

// MARK: - MIMEPart

/// One part of a multipart body: its headers and bytes (RFC 2046 §5.1).
///
/// ```swift
/// let part = MIMEPart.json(["_id": "doc", "_rev": "1-a"])
/// part.contentType?.mediaType   // "application/json"
/// let file = MIMEPart(body: bytes, contentType: "image/png", filename: "photo.png")
/// file.filename                 // "photo.png"
/// ```
package struct MIMEPart: Sendable, Hashable {
    /// The part's headers, in order.
    package var headers: HTTPFields
    /// The part's bytes.
    package var body: [UInt8]

    /// Creates a part.
    package init(headers: HTTPFields = [:], body: [UInt8]) {
        self.headers = headers
        self.body = body
    }

    /// A part with a `Content-Type` and, for an attachment, `Content-Disposition: attachment; filename="…"`.
    package init(body: [UInt8], contentType: String, filename: String? = nil) {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        if let filename {
            headers[.contentDisposition] = HeaderValue("attachment", parameters: ["filename": filename]).description
        }
        self.init(headers: headers, body: body)
    }

    /// A JSON part (`Content-Type: application/json`).
    package static func json(_ value: JSONValue) -> MIMEPart {
        MIMEPart(body: value.serialized(), contentType: "application/json")
    }

    /// An error part (`Content-Type: application/json; error="true"`, replication-protocol.md §9.3).
    package static func jsonError(_ value: JSONValue) -> MIMEPart {
        MIMEPart(body: value.serialized(), contentType: #"application/json; error="true""#)
    }

    /// A part holding a nested multipart body, e.g. a `multipart/related` revision inside `multipart/mixed`.
    package init(nested body: MultipartBody) {
        var headers = HTTPFields()
        headers[.contentType] = body.contentType
        var bytes = body.serialized()
        // The nested closing delimiter's line break belongs to the enclosing delimiter (as Sync Gateway writes it).
        while let last = bytes.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: "\n") { bytes.removeLast() }
        self.init(headers: headers, body: bytes)
    }

    /// The parsed `Content-Type`, if any.
    package var contentType: HeaderValue? {
        headers[.contentType].map { HeaderValue(parsing: $0) }
    }

    /// The `filename` parameter of `Content-Disposition`, if any.
    package var filename: String? {
        headers[.contentDisposition].flatMap { HeaderValue(parsing: $0).parameters["filename"] }
    }

    /// A header by name, case-insensitively (e.g. `X-Doc-ID`).
    package func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }
}
