import Foundation
import HTTPTypes
import MultipartKit

// MARK: - MultipartBody

/// A whole multipart body (RFC 2046 §5.1): its subtype, boundary and parts, parsed and serialized with
/// MultipartKit's `MultipartParser` and `MultipartSerializer`.
///
/// ```swift
/// let body = MultipartBody(
///     subtype: "related", parts: [.json(["_id": "doc"]), MIMEPart(body: bytes, contentType: "text/plain")])
/// response.headers[.contentType] = body.contentType   // multipart/related; boundary="…"
/// let bytes = body.serialized()
/// let again = try MultipartBody(parsing: bytes, contentType: body.contentType)
/// ```
package struct MultipartBody: Sendable, Hashable {
    /// The subtype: `related`, `mixed`, `form-data`, …
    package var subtype: String
    /// The boundary between parts.
    package var boundary: String
    /// The parts, in order.
    package var parts: [MIMEPart]

    /// Creates a body; by default with a fresh random boundary.
    package init(subtype: String, boundary: String = MultipartBody.makeBoundary(), parts: [MIMEPart]) {
        self.subtype = subtype
        self.boundary = boundary
        self.parts = parts
    }

    /// The `Content-Type` header value: `multipart/<subtype>; boundary="<boundary>"`.
    package var contentType: String {
        HeaderValue("multipart/\(subtype)", parameters: ["boundary": boundary]).description
    }

    /// A random boundary: 32 hexadecimal digits, which never occur in the bytes around them by chance.
    package static func makeBoundary() -> String {
        RandomHex.make(bytes: 16)
    }

    // MARK: - Serializing

    /// The body's bytes: each part after `--boundary`, then `--boundary--`.
    package func serialized() -> [UInt8] {
        let multipartParts = parts.map { part in
            var headers = HTTPHeaders()
            for field in part.headers { headers.add(name: field.name.rawName, value: field.value) }
            return MultipartPart(headers: headers, body: part.body)
        }
        var buffer = ByteBuffer()
        // MultipartSerializer only writes into the buffer; it has nothing to throw.
        try? MultipartSerializer().serialize(parts: multipartParts, boundary: boundary, into: &buffer)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    // MARK: - Parsing

    /// Parses a body sent with `contentType`.
    ///
    /// - Throws: 400 when `contentType` is not `multipart/…` with a boundary, or the body is malformed or lacks
    ///   its closing delimiter.
    package init(parsing bytes: [UInt8], contentType: String) throws(CoreError) {
        let header = HeaderValue(parsing: contentType)
        guard header.isMultipart, let boundary = header.parameters["boundary"], !boundary.isEmpty,
            boundary.utf8.count <= 200
        else { throw CoreError(.invalidMultipart, "Invalid multipart Content-Type: missing boundary") }
        let subtype = String(header.mediaType.dropFirst("multipart/".count))
        self.init(subtype: subtype, boundary: boundary, parts: try Self.parts(of: bytes, boundary: boundary))
    }

    /// The parts of `bytes` delimited by `boundary`.
    private static func parts(of bytes: [UInt8], boundary: String) throws(CoreError) -> [MIMEPart] {
        // RFC 2046 wants at least one part, but writers (Go's, MultipartKit's) close an empty body at once;
        // MultipartKit's parser refuses that, so it is recognised here.
        if let first = firstDelimiter(in: bytes, boundary: boundary),
            first == closeDelimiterStart(in: bytes, boundary: boundary)
        {
            return []
        }
        let parser = MultipartParser(boundary: boundary)
        var parts: [MIMEPart] = []
        var headers = HTTPFields()
        var body: [UInt8] = []
        var partOpen = false
        parser.onHeader = { name, value in
            partOpen = true
            if let fieldName = HTTPField.Name(name) { headers.append(HTTPField(name: fieldName, value: value)) }
        }
        parser.onBody = { buffer in
            partOpen = true
            body.append(contentsOf: buffer.readableBytesView)
        }
        parser.onPartComplete = {
            parts.append(MIMEPart(headers: headers, body: body))
            headers = HTTPFields()
            body = []
            partOpen = false
        }
        do {
            try parser.execute(bytes)
        } catch {
            throw CoreError(.invalidMultipart, "Invalid multipart body")
        }
        guard !partOpen, containsCloseDelimiter(bytes, boundary: boundary) else {
            throw CoreError(.invalidMultipart, "Invalid multipart body: missing closing boundary")
        }
        return parts
    }

    /// Whether `bytes` hold the close delimiter `--boundary--` at the start of a line.
    private static func containsCloseDelimiter(_ bytes: [UInt8], boundary: String) -> Bool {
        closeDelimiterStart(in: bytes, boundary: boundary) != nil
    }

    /// Where the last close delimiter `--boundary--` at the start of a line begins.
    private static func closeDelimiterStart(in bytes: [UInt8], boundary: String) -> Int? {
        lineStart(of: Array("--\(boundary)--".utf8), in: bytes, fromEnd: true)
    }

    /// Where the first delimiter `--boundary` at the start of a line begins.
    private static func firstDelimiter(in bytes: [UInt8], boundary: String) -> Int? {
        lineStart(of: Array("--\(boundary)".utf8), in: bytes, fromEnd: false)
    }

    /// The first (or last) index where `needle` occurs at the start of a line of `bytes`.
    private static func lineStart(of needle: [UInt8], in bytes: [UInt8], fromEnd: Bool) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        let indices = 0...(bytes.count - needle.count)
        let isMatch = { (index: Int) -> Bool in
            bytes[index] == needle[0] && (index == 0 || bytes[index - 1] == UInt8(ascii: "\n"))
                && bytes[index..<(index + needle.count)].elementsEqual(needle)
        }
        return fromEnd ? indices.reversed().first(where: isMatch) : indices.first(where: isMatch)
    }
}
