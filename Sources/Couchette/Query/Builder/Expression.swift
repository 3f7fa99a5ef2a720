import CouchetteCore
import Foundation

/// Makes the expressions of ``QueryBuilder`` queries: properties, literals and parameters.
///
/// ```swift
/// let query = QueryBuilder.select(SelectResult.expression(Meta.id), SelectResult.property("name"))
///     .from(DataSource.collection(lists))
///     .where(Expression.property("owner").equalTo(Expression.parameter("owner")))
/// ```
public enum Expression {
    /// A property of the documents: a path of names separated by dots, with `[n]` for array elements
    /// (`"taskList.id"`, `"tags[0]"`); `\.` is a dot inside a name.
    public static func property(_ property: String) -> any PropertyExpressionProtocol {
        PropertyExpression(steps: propertyPath(property))
    }

    /// All properties: `*` in a select list and `COUNT(*)`; ``PropertyExpressionProtocol/from(_:)`` limits it to one
    /// data source.
    public static func all() -> any PropertyExpressionProtocol {
        PropertyExpression(steps: PropertyExpression.all)
    }

    /// A literal: a string, number, Boolean, `Date` (as its ISO-8601 text), array, dictionary or nil (null).
    public static func value(_ value: Any?) -> any ExpressionProtocol {
        guard let value else { return BuiltExpression(.literal(.null)) }
        do {
            return BuiltExpression(literal(try DocumentValues.json(from: value, path: "value") { _ in
                throw CouchetteError(.badInput, message: "A blob cannot be a query literal")
            }))
        } catch {
            return BuiltExpression(.invalid("\(error)"))
        }
    }

    /// A string literal (nil: null).
    public static func string(_ value: String?) -> any ExpressionProtocol { Self.value(value) }
    /// A number literal (nil: null).
    public static func number(_ value: NSNumber?) -> any ExpressionProtocol { Self.value(value) }
    /// An integer literal.
    public static func int(_ value: Int) -> any ExpressionProtocol { BuiltExpression(.literal(.int(Int64(value)))) }
    /// A 64-bit integer literal.
    public static func int64(_ value: Int64) -> any ExpressionProtocol { BuiltExpression(.literal(.int(value))) }
    /// A floating point literal.
    public static func float(_ value: Float) -> any ExpressionProtocol { BuiltExpression(.literal(.double(Double(value)))) }
    /// A floating point literal.
    public static func double(_ value: Double) -> any ExpressionProtocol { BuiltExpression(.literal(.double(value))) }
    /// A Boolean literal.
    public static func boolean(_ value: Bool) -> any ExpressionProtocol { BuiltExpression(.literal(.bool(value))) }
    /// A date literal, as ISO-8601 text (nil: null).
    public static func date(_ value: Date?) -> any ExpressionProtocol { Self.value(value) }
    /// A dictionary literal (nil: null).
    public static func dictionary(_ value: [String: Any]?) -> any ExpressionProtocol { Self.value(value) }
    /// An array literal (nil: null).
    public static func array(_ value: [Any]?) -> any ExpressionProtocol { Self.value(value) }

    /// A parameter (`$name`), given its value by ``Query/parameters`` at each run; never spliced into the SQL.
    /// The name is letters, digits and `_`, as SQL++ `$name` allows; any other name fails the query with a 400.
    public static func parameter(_ name: String) -> any ExpressionProtocol {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            return BuiltExpression(.invalid("\"\(name)\" is not a parameter name (letters, digits and _)"))
        }
        return BuiltExpression(.parameter(name))
    }

    /// The negative of a number.
    public static func negated(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        switch expression.node {
        case .literal(.int(let number)) where number != .min: BuiltExpression(.literal(.int(-number)))
        case .literal(.double(let number)): BuiltExpression(.literal(.double(-number)))
        case let node: BuiltExpression(.unary("-", node))
        }
    }

    /// Logical negation (`NOT`).
    public static func not(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.unary("NOT", expression.node))
    }

    /// A full-text index, for ``FullTextFunction/match(_:query:)`` and ``FullTextFunction/rank(_:)``.
    public static func fullTextIndex(_ name: String) -> any IndexExpressionProtocol { IndexExpression(name: name) }

    /// A JSON value as literal nodes; arrays and dictionaries become array and object expressions, as SQL++ text
    /// parses them.
    static func literal(_ value: JSONValue) -> QueryExpression {
        switch value {
        case .array(let elements): .array(elements.map(literal))
        case .object(let members): .object(members.keys.sorted().map { .init(name: $0, value: literal(members[$0]!)) })
        default: .literal(value)
        }
    }

    /// `"a.b[2].c"` as path steps; `\.` is a literal dot.
    static func propertyPath(_ text: String) -> [QueryExpression.PathStep] {
        var steps: [QueryExpression.PathStep] = []
        var name = ""
        var characters = text.makeIterator()
        var pendingName = true
        func endName() {
            if pendingName { steps.append(.key(name)) }
            name = ""
            pendingName = false
        }
        while let character = characters.next() {
            switch character {
            case "\\":
                if let next = characters.next() { name.append(next) }
                pendingName = true
            case ".":
                endName()
                pendingName = true
            case "[":
                endName()
                var digits = ""
                while let next = characters.next(), next != "]" { digits.append(next) }
                if let index = Int(digits.trimmingCharacters(in: .whitespaces)) {
                    steps.append(.index(index))
                } else {
                    steps.append(.key("[\(digits)]"))
                }
            default:
                name.append(character)
                pendingName = true
            }
        }
        if pendingName { steps.append(.key(name)) }
        return steps
    }
}
