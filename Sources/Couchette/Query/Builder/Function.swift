/// Functions of ``QueryBuilder`` queries: aggregates, math, strings and dates, as in SQL++.
public enum Function {
    private static func call(_ name: String, _ arguments: any ExpressionProtocol...) -> any ExpressionProtocol {
        BuiltExpression(.function(name, arguments.map(\.node), distinct: false))
    }

    // MARK: Aggregates

    /// The number of rows whose value is valued; `Function.count(Expression.all())` counts every row.
    public static func count(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("COUNT", expression) }
    public static func sum(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SUM", expression) }
    public static func avg(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("AVG", expression) }
    public static func min(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("MIN", expression) }
    public static func max(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("MAX", expression) }

    // MARK: Math

    public static func abs(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ABS", expression) }
    public static func acos(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ACOS", expression) }
    public static func asin(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ASIN", expression) }
    public static func atan(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ATAN", expression) }
    /// The angle of the point (x, y), in radians (SQL++ `ATAN2(x, y)`).
    public static func atan2(x: any ExpressionProtocol, y: any ExpressionProtocol) -> any ExpressionProtocol {
        call("ATAN2", x, y)
    }
    /// The angle of the point (x, y), in radians (SQL++ `ATAN2(x, y)`).
    public static func atan2(y: any ExpressionProtocol, x: any ExpressionProtocol) -> any ExpressionProtocol {
        call("ATAN2", x, y)
    }
    public static func ceil(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("CEIL", expression) }
    public static func cos(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("COS", expression) }
    public static func degrees(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("DEGREES", expression) }
    public static func e() -> any ExpressionProtocol { call("E") }
    public static func exp(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("EXP", expression) }
    public static func floor(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("FLOOR", expression) }
    /// The natural logarithm.
    public static func ln(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LN", expression) }
    /// The base-10 logarithm.
    public static func log(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LOG", expression) }
    public static func pi() -> any ExpressionProtocol { call("PI") }
    public static func power(base: any ExpressionProtocol, exponent: any ExpressionProtocol) -> any ExpressionProtocol {
        call("POWER", base, exponent)
    }
    public static func radians(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("RADIANS", expression) }
    public static func round(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ROUND", expression) }
    public static func round(_ expression: any ExpressionProtocol, digits: any ExpressionProtocol) -> any ExpressionProtocol {
        call("ROUND", expression, digits)
    }
    public static func sign(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SIGN", expression) }
    public static func sin(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SIN", expression) }
    public static func sqrt(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SQRT", expression) }
    public static func tan(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("TAN", expression) }
    public static func trunc(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("TRUNC", expression) }
    public static func trunc(_ expression: any ExpressionProtocol, digits: any ExpressionProtocol) -> any ExpressionProtocol {
        call("TRUNC", expression, digits)
    }

    // MARK: Strings

    /// Whether the string contains `substring`.
    public static func contains(_ expression: any ExpressionProtocol, substring: any ExpressionProtocol) -> any ExpressionProtocol {
        call("CONTAINS", expression, substring)
    }
    public static func length(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LENGTH", expression) }
    public static func lower(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LOWER", expression) }
    public static func ltrim(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LTRIM", expression) }
    public static func rtrim(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("RTRIM", expression) }
    public static func trim(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("TRIM", expression) }
    public static func upper(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("UPPER", expression) }

    // MARK: Dates

    /// Milliseconds since 1970 as ISO-8601 text (UTC).
    public static func millisToString(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("MILLIS_TO_STR", expression)
    }
    public static func millisToUTC(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("MILLIS_TO_UTC", expression)
    }
    /// ISO-8601 text as milliseconds since 1970.
    public static func stringToMillis(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("STR_TO_MILLIS", expression)
    }
    public static func stringToUTC(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("STR_TO_UTC", expression)
    }

    // MARK: Types

    /// The first of the expressions that is valued.
    public static func ifMissingOrNull(_ expressions: any ExpressionProtocol...) -> any ExpressionProtocol {
        BuiltExpression(.function("IFMISSINGORNULL", expressions.map(\.node), distinct: false))
    }
    public static func isArray(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISARRAY", expression) }
    public static func isDictionary(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISOBJECT", expression) }
    public static func isNumber(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISNUMBER", expression) }
    public static func isString(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISSTRING", expression) }
    public static func isBoolean(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISBOOLEAN", expression) }
}

/// Array functions of ``QueryBuilder`` queries.
public enum ArrayFunction {
    /// Whether the array holds `value`.
    public static func contains(_ expression: any ExpressionProtocol, value: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.function("ARRAY_CONTAINS", [expression.node, value.node], distinct: false))
    }

    /// The array's length.
    public static func length(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.function("ARRAY_LENGTH", [expression.node], distinct: false))
    }
}

/// Full-text search in ``QueryBuilder`` queries, over an index made with ``FullTextIndexConfiguration`` or
/// ``IndexBuilder/fullTextIndex(items:)``.
///
/// ```swift
/// let taskFTS = Expression.fullTextIndex("taskFTS")
/// QueryBuilder.select(SelectResult.expression(Meta.id)).from(DataSource.collection(tasks))
///     .where(FullTextFunction.match(taskFTS, query: "milk")).orderBy(Ordering.expression(FullTextFunction.rank(taskFTS)).descending())
/// ```
public enum FullTextFunction {
    /// Whether the document matches the full-text search `query` (FTS5 syntax: words, `"phrases"`, `OR`, `prefix*`).
    public static func match(_ index: any IndexExpressionProtocol, query: String) -> any ExpressionProtocol {
        BuiltExpression(.function("MATCH", [index.node, .literal(.string(query))], distinct: false))
    }

    /// ``match(_:query:)`` with the search text from an expression, such as a parameter.
    public static func match(_ index: any IndexExpressionProtocol, query: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.function("MATCH", [index.node, query.node], distinct: false))
    }

    /// How well the document matches the index's `match` (higher is better).
    public static func rank(_ index: any IndexExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.function("RANK", [index.node], distinct: false))
    }

    /// ``match(_:query:)`` with the index by name (the older form).
    public static func match(indexName: String, query: String) -> any ExpressionProtocol {
        match(Expression.fullTextIndex(indexName), query: query)
    }

    /// ``rank(_:)`` with the index by name (the older form).
    public static func rank(_ indexName: String) -> any ExpressionProtocol {
        rank(Expression.fullTextIndex(indexName))
    }
}
