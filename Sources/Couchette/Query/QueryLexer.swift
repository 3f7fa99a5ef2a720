import Foundation

/// One token of a SQL++ query, with its position (a character offset from 0) for error messages.
struct QueryToken: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        /// A name: a keyword or an identifier (`SELECT`, `name`); backquoted identifiers are `quotedIdentifier`.
        case word(String)
        case quotedIdentifier(String)
        case string(String)
        case integer(Int64)
        case number(Double)
        /// `$name`.
        case parameter(String)
        /// Punctuation and operators: `(`, `)`, `[`, `]`, `{`, `}`, `,`, `.`, `:`, `*`, `+`, `-`, `/`, `%`, `=`, `==`,
        /// `!=`, `<>`, `<`, `<=`, `>`, `>=`, `||`.
        case symbol(String)
        case end
    }

    let kind: Kind
    let position: Int

    /// The word in upper case, when the token is one.
    var keyword: String? {
        if case .word(let word) = kind { return word.uppercased() }
        return nil
    }

    /// How the token reads in an error message.
    var shown: String {
        switch kind {
        case .word(let word): "'\(word)'"
        case .quotedIdentifier(let name): "`\(name)`"
        case .string(let text): "'\(text)'"
        case .integer(let value): "\(value)"
        case .number(let value): "\(value)"
        case .parameter(let name): "$\(name)"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end of the query"
        }
    }
}

/// Splits a SQL++ query into tokens. Strings are single- or double-quoted (a doubled quote escapes it),
/// identifiers may be backquoted, `--` starts a comment to the end of the line and `/* */` a block comment.
struct QueryLexer {
    private let characters: [Character]
    private var index = 0

    init(_ text: String) {
        characters = Array(text)
    }

    /// Every token, ending with `.end`.
    ///
    /// - Throws: `.badInput` naming the position of an unterminated string or comment or an unknown character.
    static func tokens(of text: String) throws -> [QueryToken] {
        var lexer = QueryLexer(text)
        var tokens: [QueryToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private mutating func next() throws -> QueryToken {
        try skipSpaceAndComments()
        let start = index
        guard index < characters.count else { return QueryToken(kind: .end, position: start) }
        let character = characters[index]
        if character.isLetter || character == "_" {
            var word = ""
            while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" {
                word.append(characters[index])
                index += 1
            }
            return QueryToken(kind: .word(word), position: start)
        }
        if character.isASCII, character.isNumber || (character == "." && peek(1)?.isNumber == true) {
            return try number(start: start)
        }
        switch character {
        case "'", "\"":
            return QueryToken(kind: .string(try quoted(by: character, start: start)), position: start)
        case "`":
            return QueryToken(kind: .quotedIdentifier(try quoted(by: "`", start: start)), position: start)
        case "$":
            index += 1
            var name = ""
            while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" {
                name.append(characters[index])
                index += 1
            }
            guard !name.isEmpty else { throw QueryLexer.error("a parameter name after '$'", at: start) }
            return QueryToken(kind: .parameter(name), position: start)
        default:
            break
        }
        for symbol in ["==", "!=", "<>", "<=", ">=", "||"] where matches(symbol) {
            index += symbol.count
            return QueryToken(kind: .symbol(symbol), position: start)
        }
        if "()[]{},.:*+-/%=<>".contains(character) {
            index += 1
            return QueryToken(kind: .symbol(String(character)), position: start)
        }
        throw QueryLexer.error("a token, not '\(character)'", at: start)
    }

    private func peek(_ offset: Int) -> Character? {
        index + offset < characters.count ? characters[index + offset] : nil
    }

    private func matches(_ symbol: String) -> Bool {
        for (offset, character) in symbol.enumerated() where peek(offset) != character { return false }
        return true
    }

    private mutating func skipSpaceAndComments() throws {
        while index < characters.count {
            if characters[index].isWhitespace {
                index += 1
            } else if matches("--") {
                while index < characters.count, !characters[index].isNewline { index += 1 }
            } else if matches("/*") {
                let start = index
                index += 2
                while index < characters.count, !matches("*/") { index += 1 }
                guard index < characters.count else { throw QueryLexer.error("'*/' to end the comment", at: start) }
                index += 2
            } else {
                return
            }
        }
    }

    private mutating func quoted(by quote: Character, start: Int) throws -> String {
        index += 1
        var text = ""
        while true {
            guard index < characters.count else {
                throw QueryLexer.error("a closing \(quote) for the text starting", at: start)
            }
            let character = characters[index]
            index += 1
            if character == quote {
                if peek(0) == quote {
                    text.append(quote)
                    index += 1
                    continue
                }
                return text
            }
            text.append(character)
        }
    }

    private mutating func number(start: Int) throws -> QueryToken {
        var text = ""
        var isInteger = true
        while index < characters.count, characters[index].isASCII, characters[index].isNumber { text.append(characters[index]); index += 1 }
        if peek(0) == ".", peek(1)?.isNumber == true || text.isEmpty {
            isInteger = false
            text.append(".")
            index += 1
            while index < characters.count, characters[index].isASCII, characters[index].isNumber { text.append(characters[index]); index += 1 }
        }
        if let e = peek(0), e == "e" || e == "E" {
            let signed = peek(1) == "+" || peek(1) == "-"
            if peek(signed ? 2 : 1)?.isNumber == true {
                isInteger = false
                text.append("e")
                index += 1
                if signed { text.append(characters[index]); index += 1 }
                while index < characters.count, characters[index].isASCII, characters[index].isNumber { text.append(characters[index]); index += 1 }
            }
        }
        if isInteger, let value = Int64(text) { return QueryToken(kind: .integer(value), position: start) }
        guard let value = Double(text) else { throw QueryLexer.error("a number", at: start) }
        return QueryToken(kind: .number(value), position: start)
    }

    /// A syntax error: what was expected, and where.
    static func error(_ expected: String, at position: Int) -> CouchetteError {
        CouchetteError(.badInput, message: "Syntax error at position \(position): expected \(expected)")
    }
}
