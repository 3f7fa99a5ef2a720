// MARK: - HeaderValue

/// A MIME header value with parameters (RFC 2045 §5.1, RFC 6266): `multipart/related; boundary="abc"`,
/// `attachment; filename="a b.txt"`, `application/json; error="true"`.
///
/// Parameter names are case-insensitive (kept lowercased); quoted values are unquoted, with `\"` and `\\` escapes.
///
/// ```swift
/// let header = HeaderValue(parsing: #"multipart/related; boundary="xyz""#)
/// header.value                    // "multipart/related"
/// header.parameters["boundary"]   // "xyz"
/// HeaderValue("attachment", parameters: ["filename": "a\"b"]).description   // attachment; filename="a\"b"
/// ```
package struct HeaderValue: Sendable, Hashable, CustomStringConvertible {
    /// The value before the first `;`, trimmed; lowercased when it is a media type.
    package var value: String
    /// The parameters by lowercased name.
    package var parameters: [String: String]

    /// Creates a header value.
    package init(_ value: String, parameters: [String: String] = [:]) {
        self.value = value
        self.parameters = parameters
    }

    /// Parses a header value. Malformed parameters are skipped.
    package init(parsing text: String) {
        var scanner = Substring(text)
        self.value = Self.scanUntilSemicolon(&scanner).trimmingWhitespace()
        self.parameters = [:]
        while !scanner.isEmpty {
            scanner = scanner.dropFirst()  // ";"
            let name = Self.scan(&scanner, until: { $0 == "=" || $0 == ";" }).trimmingWhitespace().lowercased()
            guard scanner.first == "=" else { continue }
            scanner = scanner.dropFirst()
            scanner = scanner.drop(while: { $0 == " " || $0 == "\t" })
            let parameterValue: String
            if scanner.first == "\"" {
                parameterValue = Self.scanQuoted(&scanner)
                _ = Self.scanUntilSemicolon(&scanner)
            } else {
                parameterValue = Self.scanUntilSemicolon(&scanner).trimmingWhitespace()
            }
            if !name.isEmpty { parameters[name] = parameterValue }
        }
    }

    /// The media type's `type/subtype`, lowercased (for `Content-Type` values).
    package var mediaType: String { value.lowercased() }

    /// Whether the value is a `multipart/…` media type.
    package var isMultipart: Bool { mediaType.hasPrefix("multipart/") }

    /// The serialized value; parameters sorted by name, values quoted.
    package var description: String {
        ([value] + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quoted($0.value))" })
            .joined(separator: "; ")
    }

    /// `text` as a quoted string, with `"` and `\` escaped.
    package static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result + "\""
    }

    // MARK: - Scanning

    private static func scan(_ scanner: inout Substring, until stop: (Character) -> Bool) -> Substring {
        let end = scanner.firstIndex(where: stop) ?? scanner.endIndex
        defer { scanner = scanner[end...] }
        return scanner[..<end]
    }

    private static func scanUntilSemicolon(_ scanner: inout Substring) -> Substring {
        scan(&scanner, until: { $0 == ";" })
    }

    /// Reads a quoted string starting at `"`, leaving the scanner after the closing quote.
    private static func scanQuoted(_ scanner: inout Substring) -> String {
        var result = ""
        var escaped = false
        scanner = scanner.dropFirst()
        while let character = scanner.first {
            scanner = scanner.dropFirst()
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                break
            } else {
                result.append(character)
            }
        }
        return result
    }
}

// MARK: - Trimming

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
