import CouchetteCore

/// SQL++ text of parsed or built queries: a builder query's `description` and the expressions of
/// ``ValueIndex``/``FullTextIndex`` items. Every compound expression is parenthesized, so parsing the text gives back
/// the same statement.
extension SelectStatement {
    var text: String {
        var parts = ["SELECT" + (distinct ? " DISTINCT" : "")]
        parts.append(columns.map { column in
            column.expression.text + (column.alias.map { " AS \(Self.identifier($0))" } ?? "")
        }.joined(separator: ", "))
        if let from {
            parts.append("FROM \(from.text)")
            for join in joins {
                switch (join.leftOuter, join.on) {
                case (_, nil): parts.append("CROSS JOIN \(join.source.text)")
                case (true, let on?): parts.append("LEFT OUTER JOIN \(join.source.text) ON \(on.text)")
                case (false, let on?): parts.append("JOIN \(join.source.text) ON \(on.text)")
                }
            }
        }
        if let whereClause { parts.append("WHERE \(whereClause.text)") }
        if !groupBy.isEmpty { parts.append("GROUP BY " + groupBy.map(\.text).joined(separator: ", ")) }
        if let having { parts.append("HAVING \(having.text)") }
        if !orderBy.isEmpty {
            parts.append("ORDER BY " + orderBy.map { $0.expression.text + ($0.descending ? " DESC" : " ASC") }.joined(separator: ", "))
        }
        if let limit { parts.append("LIMIT \(limit.text)") }
        if let offset { parts.append("OFFSET \(offset.text)") }
        return parts.joined(separator: " ")
    }

    /// A name as an SQL++ identifier: bare when it can be, backquoted otherwise.
    static func identifier(_ name: String) -> String {
        let plain = name.first.map { $0.isLetter || $0 == "_" } == true
            && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
            && !QueryParser.reserved.contains(name.uppercased()) && !["ALL", "SOME"].contains(name.uppercased())
        return plain ? name : "`" + name.replacingOccurrences(of: "`", with: "``") + "`"
    }
}

extension SelectStatement.Source {
    var text: String {
        let name = [scope, collection].compactMap { $0 }.map(SelectStatement.identifier).joined(separator: ".")
        return name + (alias.map { " AS \(SelectStatement.identifier($0))" } ?? "")
    }
}

extension QueryExpression {
    /// The expression as SQL++ text.
    var text: String {
        switch self {
        case .literal(let value): return Self.literalText(value)
        case .missing: return "MISSING"
        case .array(let elements): return "[" + elements.map(\.text).joined(separator: ", ") + "]"
        case .object(let members):
            return "{" + members.map { Self.literalText(.string($0.name)) + ": " + $0.value.text }.joined(separator: ", ") + "}"
        case .path(let steps):
            var text = ""
            for step in steps {
                switch step {
                case .key(let key): text += (text.isEmpty ? "" : ".") + SelectStatement.identifier(key)
                case .index(let index): text += "[\(index)]"
                }
            }
            return text
        case .meta(let alias, let field): return "META(\(alias.map(SelectStatement.identifier) ?? "")).\(field)"
        case .parameter(let name): return "$\(name)"
        case .star(let alias): return alias.map { "\(SelectStatement.identifier($0)).*" } ?? "*"
        case .unary(let op, let operand): return "(\(op) \(operand.text))"  // "- -1", never "--1" (a comment)
        case .binary(let op, let left, let right): return "(\(left.text) \(op) \(right.text))"
        case .between(let subject, let low, let high, let negated):
            return "(\(subject.text) \(negated ? "NOT " : "")BETWEEN \(low.text) AND \(high.text))"
        case .check(let subject, let check, let negated):
            return "(\(subject.text) IS \(negated ? "NOT " : "")\(check.rawValue))"
        case .function(let name, let arguments, let distinct):
            return "\(name)(\(distinct ? "DISTINCT " : "")\(arguments.map(\.text).joined(separator: ", ")))"
        case .quantified(let quantifier, let variable, let list, let condition):
            return "(\(quantifier.rawValue) \(SelectStatement.identifier(variable)) IN \(list.text) SATISFIES \(condition.text) END)"
        case .collate(let subject, let collation):
            return "(\(subject.text) COLLATE (\(collation.text.isEmpty ? "BINARY" : collation.text)))"
        case .invalid(let reason): return "INVALID(\(Self.literalText(.string(reason))))"
        case .caseWhen(let subject, let branches, let otherwise):
            var text = "CASE"
            if let subject { text += " \(subject.text)" }
            for branch in branches { text += " WHEN \(branch.when.text) THEN \(branch.then.text)" }
            if let otherwise { text += " ELSE \(otherwise.text)" }
            return text + " END"
        }
    }

    private static func literalText(_ value: JSONValue) -> String {
        switch value {
        case .null: "NULL"
        case .bool(let flag): flag ? "TRUE" : "FALSE"
        case .int(let number): number == .min ? "(-9223372036854775807 - 1)" : "\(number)"
        case .double(let number): number.isFinite ? "\(number)" : "NULL"
        case .string(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .array(let elements): "[" + elements.map(literalText).joined(separator: ", ") + "]"
        case .object(let members):
            "{" + members.keys.sorted().map { literalText(.string($0)) + ": " + literalText(members[$0]!) }.joined(separator: ", ") + "}"
        }
    }
}
