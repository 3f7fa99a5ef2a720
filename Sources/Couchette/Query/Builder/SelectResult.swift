/// A column of a ``QueryBuilder`` query's results.
public protocol SelectResultProtocol: Sendable {}

/// A result column that can be renamed with ``as(_:)``.
public protocol SelectResultAs: SelectResultProtocol {
    /// The column's name in the results.
    func `as`(_ alias: String?) -> any SelectResultProtocol
}

/// All properties (`*`), of every data source or, with ``from(_:)``, of one.
public protocol SelectResultFrom: SelectResultProtocol {
    /// Only the properties of the data source with this alias.
    func from(_ alias: String?) -> any SelectResultProtocol
}

/// Makes the result columns of ``QueryBuilder`` queries.
///
/// ```swift
/// QueryBuilder.select(SelectResult.expression(Meta.id).as("id"), SelectResult.property("name"), SelectResult.all())
/// ```
public enum SelectResult {
    /// A property; the column is named by the path's last name (`"taskList.id"` → `id`).
    public static func property(_ property: String) -> any SelectResultAs {
        expression(Expression.property(property))
    }

    /// Any expression; `Meta` fields are named by the field, other expressions `$1`, `$2`… by position.
    public static func expression(_ expression: any ExpressionProtocol) -> any SelectResultAs {
        BuiltSelectResult(column: .init(expression: expression.node))
    }

    /// Every property of the documents, as one dictionary per data source named by its alias.
    public static func all() -> any SelectResultFrom {
        BuiltSelectResult(column: .init(expression: .star(alias: nil)))
    }
}

struct BuiltSelectResult: SelectResultAs, SelectResultFrom {
    let column: SelectStatement.ResultColumn

    func `as`(_ alias: String?) -> any SelectResultProtocol {
        BuiltSelectResult(column: .init(expression: column.expression, alias: alias))
    }

    func from(_ alias: String?) -> any SelectResultProtocol {
        BuiltSelectResult(column: .init(expression: .star(alias: alias)))
    }
}

extension SelectResultProtocol {
    var column: SelectStatement.ResultColumn {
        (self as? BuiltSelectResult)?.column
            ?? .init(expression: .invalid("Only SelectResult makes the columns of a QueryBuilder query"))
    }
}
