/// A sort key of a ``QueryBuilder`` query.
public protocol OrderingProtocol: Sendable {}

/// A sort key whose direction can be chosen; ascending unless ``descending()``.
public protocol SortOrder: OrderingProtocol {
    /// Smallest first.
    func ascending() -> any OrderingProtocol
    /// Largest first.
    func descending() -> any OrderingProtocol
}

/// Makes the sort keys of ``QueryBuilder`` queries: `Ordering.property("name").descending()`.
public enum Ordering {
    /// Sort by a property.
    public static func property(_ property: String) -> any SortOrder { expression(Expression.property(property)) }

    /// Sort by any expression.
    public static func expression(_ expression: any ExpressionProtocol) -> any SortOrder {
        BuiltOrdering(ordering: .init(expression: expression.node, descending: false))
    }
}

struct BuiltOrdering: SortOrder {
    let ordering: SelectStatement.Ordering

    func ascending() -> any OrderingProtocol {
        BuiltOrdering(ordering: .init(expression: ordering.expression, descending: false))
    }

    func descending() -> any OrderingProtocol {
        BuiltOrdering(ordering: .init(expression: ordering.expression, descending: true))
    }
}

extension OrderingProtocol {
    var ordering: SelectStatement.Ordering {
        (self as? BuiltOrdering)?.ordering
            ?? .init(expression: .invalid("Only Ordering makes the sort keys of a QueryBuilder query"), descending: false)
    }
}
