import CouchetteCore
import Foundation

/// A recursive-descent parser of the SQL++ subset Couchette runs (Couchbase Lite 3's `SELECT`). A syntax error is
/// `.badInput` naming the position and what was expected.
///
/// Precedence, loosest first: `OR`; `AND`; `NOT`; comparisons (`=`, `==`, `!=`, `<>`, `<`, `<=`, `>`, `>=`,
/// `[NOT] LIKE`, `[NOT] IN`, `[NOT] BETWEEN`, `IS [NOT] …`); `||`; `+`, `-`; `*`, `/`, `%`; unary `-`; paths.
struct QueryParser {
    private let tokens: [QueryToken]
    private var index = 0

    /// Words that cannot be identifiers without backquotes.
    static let reserved: Set<String> = [
        "SELECT", "DISTINCT", "FROM", "AS", "JOIN", "LEFT", "OUTER", "INNER", "CROSS", "ON", "WHERE", "GROUP", "BY",
        "HAVING", "ORDER", "ASC", "DESC", "LIMIT", "OFFSET", "AND", "OR", "NOT", "IN", "LIKE", "BETWEEN", "IS", "NULL",
        "MISSING", "VALUED", "TRUE", "FALSE", "ANY", "EVERY", "SATISFIES", "END", "CASE", "WHEN", "THEN", "ELSE",
        "COLLATE",
    ]

    init(_ text: String) throws {
        tokens = try QueryLexer.tokens(of: text)
    }

    /// Parses one `SELECT` statement (an optional `;` may end it).
    static func parse(_ text: String) throws -> SelectStatement {
        var parser = try QueryParser(text)
        let statement = try parser.selectStatement()
        guard parser.current.kind == .end else { throw parser.error("the end of the query") }
        return statement
    }

    /// Parses one expression on its own (an index definition's).
    static func parseExpression(_ text: String) throws -> QueryExpression {
        var parser = try QueryParser(text)
        let expression = try parser.expression()
        guard parser.current.kind == .end else { throw parser.error("the end of the expression") }
        return expression
    }

    // MARK: - Statement

    private mutating func selectStatement() throws -> SelectStatement {
        try expectKeyword("SELECT")
        var statement = SelectStatement()
        if acceptKeyword("DISTINCT") {
            statement.distinct = true
        } else {
            _ = acceptKeyword("ALL")
        }
        repeat {
            let expression = try resultExpression()
            var alias: String?
            if acceptKeyword("AS") {
                alias = try identifier("a column alias")
            } else if let name = bareIdentifier() {
                alias = name
            }
            statement.columns.append(.init(expression: expression, alias: alias))
        } while acceptSymbol(",")
        if acceptKeyword("FROM") {
            statement.from = try source()
            while let join = try joinClause() { statement.joins.append(join) }
        }
        if acceptKeyword("WHERE") { statement.whereClause = try expression() }
        if acceptKeyword("GROUP") {
            try expectKeyword("BY")
            repeat { statement.groupBy.append(try expression()) } while acceptSymbol(",")
        }
        if acceptKeyword("HAVING") { statement.having = try expression() }
        if acceptKeyword("ORDER") {
            try expectKeyword("BY")
            repeat {
                let expression = try expression()
                let descending = acceptKeyword("DESC")
                if !descending { _ = acceptKeyword("ASC") }
                statement.orderBy.append(.init(expression: expression, descending: descending))
            } while acceptSymbol(",")
        }
        if acceptKeyword("LIMIT") { statement.limit = try expression() }
        if acceptKeyword("OFFSET") { statement.offset = try expression() }
        _ = acceptSymbol(";")
        return statement
    }

    /// `*`, `alias.*` or an expression.
    private mutating func resultExpression() throws -> QueryExpression {
        if acceptSymbol("*") { return .star(alias: nil) }
        let alias: String? =
            switch current.kind {
            case .word(let name) where !Self.reserved.contains(name.uppercased()): name
            case .quotedIdentifier(let name): name
            default: nil
            }
        if let alias, tokens[index + 1].kind == .symbol("."), tokens[index + 2].kind == .symbol("*") {
            index += 3
            return .star(alias: alias)
        }
        return try expression()
    }

    private mutating func source() throws -> SelectStatement.Source {
        let first = try identifier("a collection name")
        var source = SelectStatement.Source(scope: nil, collection: first)
        if acceptSymbol(".") {
            source = SelectStatement.Source(scope: first, collection: try identifier("a collection name"))
        }
        if acceptKeyword("AS") {
            source.alias = try identifier("an alias")
        } else if let name = bareIdentifier() {
            source.alias = name
        }
        return source
    }

    private mutating func joinClause() throws -> SelectStatement.Join? {
        var leftOuter = false
        if acceptKeyword("LEFT") {
            _ = acceptKeyword("OUTER")
            leftOuter = true
            try expectKeyword("JOIN")
        } else if acceptKeyword("INNER") {
            try expectKeyword("JOIN")
        } else if acceptKeyword("CROSS") {
            try expectKeyword("JOIN")
            return SelectStatement.Join(source: try source(), leftOuter: false, on: nil)
        } else if !acceptKeyword("JOIN") {
            return nil
        }
        let joined = try source()
        try expectKeyword("ON")
        return SelectStatement.Join(source: joined, leftOuter: leftOuter, on: try expression())
    }

    // MARK: - Expressions

    mutating func expression() throws -> QueryExpression {
        var left = try conjunction()
        while acceptKeyword("OR") { left = .binary("OR", left, try conjunction()) }
        return left
    }

    private mutating func conjunction() throws -> QueryExpression {
        var left = try negation()
        while acceptKeyword("AND") { left = .binary("AND", left, try negation()) }
        return left
    }

    private mutating func negation() throws -> QueryExpression {
        if acceptKeyword("NOT") { return .unary("NOT", try negation()) }
        return try comparison()
    }

    private mutating func comparison() throws -> QueryExpression {
        let left = try concatenation()
        if case .symbol(let symbol) = current.kind, ["=", "==", "!=", "<>", "<", "<=", ">", ">="].contains(symbol) {
            index += 1
            let op = symbol == "==" ? "=" : symbol == "<>" ? "!=" : symbol
            return .binary(op, left, try concatenation())
        }
        if acceptKeyword("IS") {
            let negated = acceptKeyword("NOT")
            for check in [QueryExpression.Check.null, .missing, .valued] where acceptKeyword(check.rawValue) {
                return .check(left, check, negated: negated)
            }
            // `IS x` / `IS NOT x`: equality that treats NULL as a value.
            return .binary(negated ? "IS NOT" : "IS", left, try concatenation())
        }
        let negated = acceptKeyword("NOT")
        if acceptKeyword("LIKE") { return .binary(negated ? "NOT LIKE" : "LIKE", left, try concatenation()) }
        if acceptKeyword("IN") { return .binary(negated ? "NOT IN" : "IN", left, try concatenation()) }
        if acceptKeyword("BETWEEN") {
            let low = try concatenation()
            try expectKeyword("AND")
            return .between(left, low: low, high: try concatenation(), negated: negated)
        }
        if negated { throw error("LIKE, IN or BETWEEN after NOT") }
        return left
    }

    private mutating func concatenation() throws -> QueryExpression {
        var left = try additive()
        while acceptSymbol("||") { left = .binary("||", left, try additive()) }
        return left
    }

    private mutating func additive() throws -> QueryExpression {
        var left = try multiplicative()
        while case .symbol(let symbol) = current.kind, symbol == "+" || symbol == "-" {
            index += 1
            left = .binary(symbol, left, try multiplicative())
        }
        return left
    }

    private mutating func multiplicative() throws -> QueryExpression {
        var left = try unary()
        while case .symbol(let symbol) = current.kind, symbol == "*" || symbol == "/" || symbol == "%" {
            index += 1
            left = .binary(symbol, left, try unary())
        }
        return left
    }

    private mutating func unary() throws -> QueryExpression {
        if acceptSymbol("-") {
            let operand = try unary()
            switch operand {
            case .literal(.int(let value)): return .literal(.int(-value))
            case .literal(.double(let value)): return .literal(.double(-value))
            default: return .unary("-", operand)
            }
        }
        if acceptSymbol("+") { return try unary() }
        return try postfix()
    }

    /// A primary expression followed by `.name` and `[index]` steps, and `COLLATE` collations.
    private mutating func postfix() throws -> QueryExpression {
        var base = try primary()
        while true {
            if acceptKeyword("COLLATE") {
                base = .collate(base, try collation())
                continue
            }
            if case .path(var steps) = base {
                if acceptSymbol(".") {
                    steps.append(.key(try identifier("a property name")))
                    base = .path(steps)
                    continue
                }
                if acceptSymbol("[") {
                    let negative = acceptSymbol("-")
                    guard case .integer(let position) = current.kind else { throw error("an array index") }
                    index += 1
                    try expectSymbol("]")
                    steps.append(.index(negative ? -Int(position) : Int(position)))
                    base = .path(steps)
                    continue
                }
            }
            return base
        }
    }

    private mutating func primary() throws -> QueryExpression {
        let token = current
        switch token.kind {
        case .integer(let value):
            index += 1
            return .literal(.int(value))
        case .number(let value):
            index += 1
            return .literal(.double(value))
        case .string(let text):
            index += 1
            return .literal(.string(text))
        case .parameter(let name):
            index += 1
            return .parameter(name)
        case .quotedIdentifier(let name):
            index += 1
            return .path([.key(name)])
        case .symbol("("):
            index += 1
            let inner = try expression()
            try expectSymbol(")")
            return inner
        case .symbol("["):
            index += 1
            var elements: [QueryExpression] = []
            if !acceptSymbol("]") {
                repeat { elements.append(try expression()) } while acceptSymbol(",")
                try expectSymbol("]")
            }
            return .array(elements)
        case .symbol("{"):
            index += 1
            var members: [QueryExpression.ObjectMember] = []
            if !acceptSymbol("}") {
                repeat {
                    guard case .string(let name) = current.kind else { throw error("a member name (a string)") }
                    index += 1
                    try expectSymbol(":")
                    members.append(.init(name: name, value: try expression()))
                } while acceptSymbol(",")
                try expectSymbol("}")
            }
            return .object(members)
        case .word(let word):
            return try wordExpression(word)
        default:
            throw error("an expression")
        }
    }

    private mutating func wordExpression(_ word: String) throws -> QueryExpression {
        let upper = word.uppercased()
        switch upper {
        case "NULL": index += 1; return .literal(.null)
        case "MISSING": index += 1; return .missing
        case "TRUE": index += 1; return .literal(.bool(true))
        case "FALSE": index += 1; return .literal(.bool(false))
        case "ANY", "EVERY", "SOME": return try quantified()
        case "CASE": return try caseExpression()
        default: break
        }
        guard !Self.reserved.contains(upper) else { throw error("an expression") }
        index += 1
        guard acceptSymbol("(") else { return .path([.key(word)]) }
        if upper == "META" {
            var alias: String?
            if !acceptSymbol(")") {
                alias = try identifier("a data source alias")
                try expectSymbol(")")
            }
            try expectSymbol(".")
            return .meta(alias: alias, field: try identifier("a META() field"))
        }
        var arguments: [QueryExpression] = []
        let distinct = acceptKeyword("DISTINCT")
        if !acceptSymbol(")") {
            repeat {
                arguments.append(acceptSymbol("*") ? .star(alias: nil) : try expression())
            } while acceptSymbol(",")
            try expectSymbol(")")
        }
        return .function(upper, arguments, distinct: distinct)
    }

    /// `UNICODE`, `NOCASE`, `NODIAC` (and `NOUNICODE`, `CASE`, `DIAC`, `BINARY`), alone or several in parentheses.
    private mutating func collation() throws -> QueryExpression.Collation {
        var collation = QueryExpression.Collation()
        let grouped = acceptSymbol("(")
        repeat {
            switch current.keyword {
            case "UNICODE": collation.unicode = true
            case "NOUNICODE", "BINARY": collation.unicode = false
            case "NOCASE": collation.ignoreCase = true
            case "CASE": collation.ignoreCase = false
            case "NODIAC": collation.ignoreAccents = true
            case "DIAC": collation.ignoreAccents = false
            default: throw error("a collation (UNICODE, NOCASE, NODIAC)")
            }
            index += 1
        } while grouped && !acceptSymbol(")")
        return collation
    }

    private mutating func quantified() throws -> QueryExpression {
        var quantifier: QueryExpression.Quantifier = acceptKeyword("EVERY") ? .every : .any
        if quantifier == .any {
            if !acceptKeyword("ANY") { try expectKeyword("SOME") }
            if acceptKeyword("AND") {
                try expectKeyword("EVERY")
                quantifier = .anyAndEvery
            }
        }
        let variable = try identifier("a variable name")
        try expectKeyword("IN")
        let list = try expression()
        try expectKeyword("SATISFIES")
        let condition = try expression()
        try expectKeyword("END")
        return .quantified(quantifier, variable: variable, list: list, condition: condition)
    }

    private mutating func caseExpression() throws -> QueryExpression {
        try expectKeyword("CASE")
        let subject = current.keyword == "WHEN" ? nil : try expression()
        var branches: [QueryExpression.CaseBranch] = []
        while acceptKeyword("WHEN") {
            let when = try expression()
            try expectKeyword("THEN")
            branches.append(.init(when: when, then: try expression()))
        }
        guard !branches.isEmpty else { throw error("WHEN") }
        let otherwise = acceptKeyword("ELSE") ? try expression() : nil
        try expectKeyword("END")
        return .caseWhen(subject: subject, branches: branches, otherwise: otherwise)
    }

    // MARK: - Tokens

    private var current: QueryToken { tokens[index] }

    private mutating func acceptKeyword(_ keyword: String) -> Bool {
        guard current.keyword == keyword else { return false }
        index += 1
        return true
    }

    private mutating func expectKeyword(_ keyword: String) throws {
        guard acceptKeyword(keyword) else { throw error(keyword) }
    }

    private mutating func acceptSymbol(_ symbol: String) -> Bool {
        guard current.kind == .symbol(symbol) else { return false }
        index += 1
        return true
    }

    private mutating func expectSymbol(_ symbol: String) throws {
        guard acceptSymbol(symbol) else { throw error("'\(symbol)'") }
    }

    /// An identifier: a word that is not reserved, or a backquoted name.
    private mutating func identifier(_ what: String) throws -> String {
        if let name = bareIdentifier() { return name }
        if case .quotedIdentifier(let name) = current.kind {
            index += 1
            return name
        }
        throw error(what)
    }

    private mutating func bareIdentifier() -> String? {
        if case .word(let word) = current.kind, !Self.reserved.contains(word.uppercased()) {
            index += 1
            return word
        }
        if case .quotedIdentifier(let name) = current.kind {
            index += 1
            return name
        }
        return nil
    }

    private func error(_ expected: String) -> CouchetteError {
        CouchetteError(
            .badInput,
            message: "Syntax error at position \(current.position): expected \(expected), found \(current.shown)")
    }
}
