import CouchetteCore
import CouchetteSQLite
import Foundation

/// The SQL functions and collations SQL++ needs beyond SQLite's own, added to each connection: the Unicode
/// collations of `COLLATE UNICODE` and the `REGEXP_…` functions.
enum SQLFunctions {
    /// The name of the Unicode collation with these options (`CB_UNICODE[_NOCASE][_NODIAC]`).
    static func unicodeCollationName(ignoringCase ignoreCase: Bool, ignoringAccents ignoreAccents: Bool) -> String {
        "CB_UNICODE" + (ignoreCase ? "_NOCASE" : "") + (ignoreAccents ? "_NODIAC" : "")
    }

    static func register(on connection: Connection) throws {
        for ignoreCase in [false, true] {
            for ignoreAccents in [false, true] {
                let name = unicodeCollationName(ignoringCase: ignoreCase, ignoringAccents: ignoreAccents)
                try connection.createCollation(name) { left, right in
                    JSONCollation.compareStrings(left, right, ignoringCase: ignoreCase, ignoringAccents: ignoreAccents)
                }
            }
        }
        try connection.createFunction("regexp_contains", argumentCount: 2) { arguments in
            try matching(arguments) { regex, text in .integer(regex.firstMatch(in: text, range: whole(text)) != nil ? 1 : 0) }
        }
        try connection.createFunction("regexp_like", argumentCount: 2) { arguments in
            try matching(arguments, wholeString: true) { regex, text in
                .integer(regex.firstMatch(in: text, range: whole(text)) != nil ? 1 : 0)
            }
        }
        try connection.createFunction("regexp_position", argumentCount: 2) { arguments in
            try matching(arguments) { regex, text in
                guard let match = regex.firstMatch(in: text, range: whole(text)) else { return .integer(-1) }
                // A position in code points, as SUBSTR and LENGTH count (from 0), not UTF-16 units.
                let prefix = (text as NSString).substring(to: match.range.location)
                return .integer(Int64(prefix.unicodeScalars.count))
            }
        }
        try connection.createFunction("regexp_replace", argumentCount: 4) { arguments in
            try matching(arguments) { regex, text in
                // The first `limit` matches (all when negative), the replacement taken literally.
                let limit = arguments[3].int64Value.map { $0 < 0 ? Int.max : Int($0) } ?? Int.max
                let result = NSMutableString(string: text)
                for match in regex.matches(in: text, range: whole(text)).prefix(limit).reversed() {
                    result.replaceCharacters(in: match.range, with: arguments[2].stringValue ?? "")
                }
                return .text(result as String)
            }
        }
    }

    /// Runs `body` with the pattern (argument 1) compiled and the text (argument 0); NULL when either is not text.
    /// With `wholeString` the pattern is anchored at both ends (a first match need not be the longest one).
    private static func matching(
        _ arguments: [SQLiteValue], wholeString: Bool = false, _ body: (NSRegularExpression, String) throws -> SQLiteValue
    ) throws -> SQLiteValue {
        guard let text = arguments[0].stringValue, let pattern = arguments[1].stringValue else { return .null }
        return try body(try patterns.expression(wholeString ? "\\A(?:" + pattern + ")\\z" : pattern), text)
    }

    private static func whole(_ text: String) -> NSRange { NSRange(location: 0, length: (text as NSString).length) }

    private static let patterns = PatternCache()

    /// Compiled regular expressions by pattern (queries run the same few patterns over many rows).
    private final class PatternCache: @unchecked Sendable {
        private let lock = NSLock()
        private var compiled: [String: NSRegularExpression] = [:]

        func expression(_ pattern: String) throws -> NSRegularExpression {
            if let known = lock.withLock({ compiled[pattern] }) { return known }
            let made = try NSRegularExpression(pattern: pattern)
            lock.withLock {
                if compiled.count > 256 { compiled.removeAll() }
                compiled[pattern] = made
            }
            return made
        }
    }
}
