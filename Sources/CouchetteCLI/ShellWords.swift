// MARK: - ShellWords

/// Splits a shell line into words as a POSIX shell would for simple cases: blanks separate words, `'…'` keeps
/// everything, `"…"` keeps everything but `\"` and `\\`, and a backslash outside quotes escapes the next character.
/// So `put doc1 '{"name": "Groceries"}'` is three words.
enum ShellWords {
    /// The words of `line`.
    ///
    /// - Throws: ``CLIError/usage(_:)`` for an unclosed quote.
    static func split(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            switch (quote, character) {
            case (nil, "\\"), ("\"", "\\"):
                escaped = true
                inWord = true
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (let open?, let close) where open == close:
                quote = nil
            case (nil, let blank) where blank.isWhitespace:
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil else { throw CLIError.usage("Unclosed \(quote!) quote.") }
        if inWord { words.append(current) }
        return words
    }
}
