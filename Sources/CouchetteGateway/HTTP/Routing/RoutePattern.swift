// MARK: - RoutePattern

/// A path pattern of the routes table, e.g. `/{db}/_user/{name}`.
///
/// Literal segments match exactly; `{name}` segments match one segment that does not start with `_` (Sync Gateway's
/// database and document segment rule `[^_/][^/]*`, spec: gateway-rest-api.md §1.2). A trailing slash is
/// insignificant, so `/{db}/` also matches `/todo`.
///
/// ```swift
/// let pattern = RoutePattern("/{db}/")
/// pattern.matches("/todo")      // true
/// pattern.matches("/_all_dbs")  // false
/// pattern.hummingbirdPath       // "/:db"
/// ```
struct RoutePattern: Sendable, Hashable, CustomStringConvertible {
    // MARK: - Segments

    /// One path segment of a pattern.
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    /// The segments, without empty ones.
    let segments: [Segment]

    /// The pattern as written.
    let description: String

    // MARK: - Initialiser

    /// Parses a pattern.
    init(_ pattern: String) {
        self.description = pattern
        self.segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            if segment.hasPrefix("{") && segment.hasSuffix("}") {
                return .parameter(String(segment.dropFirst().dropLast()))
            }
            return .literal(String(segment))
        }
    }

    // MARK: - Matching

    /// Whether a request path (without query) matches.
    func matches(_ path: String) -> Bool {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        guard components.count == segments.count else { return false }
        for (segment, component) in zip(segments, components) {
            switch segment {
            case .literal(let literal):
                if component != literal { return false }
            case .parameter:
                if component.hasPrefix("_") { return false }
            }
        }
        return true
    }

    /// The path in Hummingbird's router syntax: `/:db`.
    var hummingbirdPath: String {
        "/"
            + segments.map { segment in
                switch segment {
                case .literal(let literal): literal
                case .parameter(let name): ":\(name)"
                }
            }.joined(separator: "/")
    }
}
