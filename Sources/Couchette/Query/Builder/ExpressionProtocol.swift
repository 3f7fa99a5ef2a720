import CouchetteCore

/// An expression of a ``QueryBuilder`` query: a property, a literal, a parameter, a function call, or operators over
/// those. Make them with ``Expression``, ``Meta``, ``Function``, ``ArrayFunction``, ``ArrayExpression`` and
/// ``FullTextFunction``, and combine them with the methods below.
///
/// ```swift
/// Expression.property("type").equalTo(Expression.string("task"))
///     .and(Expression.property("complete").equalTo(Expression.boolean(false)))
/// ```
public protocol ExpressionProtocol: Sendable, CustomStringConvertible {}

/// The library's expressions: each holds a node of the same tree SQL++ text parses into.
protocol BuiltNode {
    var builtNode: QueryExpression { get }
}

/// An expression that names nothing of a data source.
struct BuiltExpression: VariableExpressionProtocol, BuiltNode {
    let builtNode: QueryExpression

    init(_ node: QueryExpression) {
        builtNode = node
    }

    var description: String { builtNode.text }
}

/// A property path, read from the first data source or, with ``from(_:)``, from the one with that alias.
struct PropertyExpression: PropertyExpressionProtocol, BuiltNode {
    let steps: [QueryExpression.PathStep]

    /// `Expression.all()`'s path: `*`.
    static let all: [QueryExpression.PathStep] = [.key("*")]

    var builtNode: QueryExpression { steps == Self.all ? .star(alias: nil) : .path(steps) }
    var description: String { builtNode.text }

    func from(_ alias: String?) -> any ExpressionProtocol {
        guard let alias else { return self }
        return BuiltExpression(steps == Self.all ? .star(alias: alias) : .path([.key(alias)] + steps))
    }
}

/// A `META()` field.
struct MetaExpression: MetaExpressionProtocol, BuiltNode {
    let field: String
    var alias: String?

    var builtNode: QueryExpression { .meta(alias: alias, field: field) }
    var description: String { builtNode.text }

    func from(_ alias: String) -> any ExpressionProtocol { MetaExpression(field: field, alias: alias) }
}

/// A full-text index's name.
struct IndexExpression: IndexExpressionProtocol, BuiltNode {
    let name: String
    var alias: String?

    var builtNode: QueryExpression { .path((alias.map { [.key($0)] } ?? []) + [.key(name)]) }
    var description: String { builtNode.text }

    func from(_ alias: String) -> any IndexExpressionProtocol { IndexExpression(name: name, alias: alias) }
}

extension ExpressionProtocol {
    /// The expression's tree. Only the library's own expressions conform; any other conformance is invalid, which
    /// running the query reports.
    var node: QueryExpression {
        (self as? any BuiltNode)?.builtNode ?? .invalid("Only Expression, Meta, Function… make QueryBuilder expressions")
    }

    private func binary(_ op: String, _ other: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.binary(op, node, other.node))
    }

    // MARK: Arithmetic

    /// The product (`*`).
    public func multiply(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("*", expression) }
    /// The quotient (`/`, always a real division).
    public func divide(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("/", expression) }
    /// The remainder (`%`).
    public func modulo(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("%", expression) }
    /// The sum (`+`).
    public func add(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("+", expression) }
    /// The difference (`-`).
    public func subtract(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("-", expression) }
    /// String concatenation (`||`).
    public func concat(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("||", expression) }

    // MARK: Comparison

    /// `<`.
    public func lessThan(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("<", expression) }
    /// `<=`.
    public func lessThanOrEqualTo(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("<=", expression) }
    /// `>`.
    public func greaterThan(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary(">", expression) }
    /// `>=`.
    public func greaterThanOrEqualTo(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        binary(">=", expression)
    }
    /// `=`.
    public func equalTo(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("=", expression) }
    /// `!=`.
    public func notEqualTo(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("!=", expression) }
    /// `LIKE`: `%` matches any run of characters, `_` one character.
    public func like(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("LIKE", expression) }
    /// `IS`: equality in which null equals null (`x.is(Expression.value(nil))` is `x IS NULL`).
    public func `is`(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        expression.node == .literal(.null) ? isNull() : binary("IS", expression)
    }
    /// `IS NOT`: inequality in which null equals null (`x.isNot(Expression.value(nil))` is `x IS NOT NULL`).
    public func isNot(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        expression.node == .literal(.null) ? isNotNull() : binary("IS NOT", expression)
    }
    /// Whether the value lies between two others, both included.
    public func between(_ low: any ExpressionProtocol, and high: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.between(node, low: low.node, high: high.node, negated: false))
    }
    /// Whether the value equals one of `expressions`.
    public func `in`(_ expressions: [any ExpressionProtocol]) -> any ExpressionProtocol {
        BuiltExpression(.binary("IN", node, .array(expressions.map(\.node))))
    }

    // MARK: NULL and MISSING

    /// Neither null nor missing (`IS VALUED`).
    public func isValued() -> any ExpressionProtocol { BuiltExpression(.check(node, .valued, negated: false)) }
    /// Null or missing (`IS NOT VALUED`).
    public func isNotValued() -> any ExpressionProtocol { BuiltExpression(.check(node, .valued, negated: true)) }
    /// Null or missing; the older name of ``isNotValued()``.
    public func isNullOrMissing() -> any ExpressionProtocol { isNotValued() }
    /// Neither null nor missing; the older name of ``isValued()``.
    public func notNullOrMissing() -> any ExpressionProtocol { isValued() }
    /// Null (`IS NULL`): present with the value null.
    public func isNull() -> any ExpressionProtocol { BuiltExpression(.check(node, .null, negated: false)) }
    /// Not null (`IS NOT NULL`).
    public func isNotNull() -> any ExpressionProtocol { BuiltExpression(.check(node, .null, negated: true)) }
    /// Missing (`IS MISSING`): the property is absent.
    public func isMissing() -> any ExpressionProtocol { BuiltExpression(.check(node, .missing, negated: false)) }
    /// Present (`IS NOT MISSING`), possibly null.
    public func isNotMissing() -> any ExpressionProtocol { BuiltExpression(.check(node, .missing, negated: true)) }

    // MARK: Logic

    /// Both conditions (`AND`).
    public func and(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("AND", expression) }
    /// Either condition (`OR`).
    public func or(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { binary("OR", expression) }
}

/// A property (``Expression/property(_:)``): ``from(_:)`` reads it from the data source with that alias.
public protocol PropertyExpressionProtocol: ExpressionProtocol {
    /// The property of the data source with this alias (nil: the first data source).
    func from(_ alias: String?) -> any ExpressionProtocol
}

/// A `META()` field (``Meta``): ``from(_:)`` reads it from the data source with that alias.
public protocol MetaExpressionProtocol: ExpressionProtocol {
    /// The field of the data source with this alias.
    func from(_ alias: String) -> any ExpressionProtocol
}

/// The variable of an ``ArrayExpression`` (`ANY v IN … SATISFIES v.x = 1 END`); `.property` of it is a path below it.
public protocol VariableExpressionProtocol: ExpressionProtocol {}

/// A full-text index named in ``FullTextFunction/match(_:query:)`` and ``FullTextFunction/rank(_:)``;
/// ``from(_:)`` names the data source whose index it is.
public protocol IndexExpressionProtocol: ExpressionProtocol {
    /// The index of the data source with this alias.
    func from(_ alias: String) -> any IndexExpressionProtocol
}
