/// Functions of ``QueryBuilder`` queries: aggregates, math, strings and dates, as in SQL++.
public enum Function {
    private static func call(_ name: String, _ arguments: any ExpressionProtocol...) -> any ExpressionProtocol {
        BuiltExpression(.function(name, arguments.map(\.node), distinct: false))
    }

    // MARK: Aggregates

    /// The number of rows whose value is valued; `Function.count(Expression.all())` counts every row.
    public static func count(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("COUNT", expression) }
    /// The sum of the values in the group.
    public static func sum(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SUM", expression) }
    /// The average of the values in the group.
    public static func avg(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("AVG", expression) }
    /// The smallest value in the group.
    public static func min(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("MIN", expression) }
    /// The largest value in the group.
    public static func max(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("MAX", expression) }

    // MARK: Math

    /// The absolute value.
    public static func abs(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ABS", expression) }
    /// The arccosine, in radians.
    public static func acos(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ACOS", expression) }
    /// The arcsine, in radians.
    public static func asin(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ASIN", expression) }
    /// The arctangent, in radians.
    public static func atan(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ATAN", expression) }
    /// The angle of the point (x, y), in radians (SQL++ `ATAN2(x, y)`).
    public static func atan2(x: any ExpressionProtocol, y: any ExpressionProtocol) -> any ExpressionProtocol {
        call("ATAN2", x, y)
    }
    /// The angle of the point (x, y), in radians (SQL++ `ATAN2(x, y)`).
    public static func atan2(y: any ExpressionProtocol, x: any ExpressionProtocol) -> any ExpressionProtocol {
        call("ATAN2", x, y)
    }
    /// The smallest integer not below the number.
    public static func ceil(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("CEIL", expression) }
    /// The cosine of an angle in radians.
    public static func cos(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("COS", expression) }
    /// Radians as degrees.
    public static func degrees(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("DEGREES", expression) }
    /// Euler's number.
    public static func e() -> any ExpressionProtocol { call("E") }
    /// e to the power of the number.
    public static func exp(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("EXP", expression) }
    /// The largest integer not above the number.
    public static func floor(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("FLOOR", expression) }
    /// The natural logarithm.
    public static func ln(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LN", expression) }
    /// The base-10 logarithm.
    public static func log(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LOG", expression) }
    /// π.
    public static func pi() -> any ExpressionProtocol { call("PI") }
    public static func power(base: any ExpressionProtocol, exponent: any ExpressionProtocol) -> any ExpressionProtocol {
        call("POWER", base, exponent)
    }
    /// Degrees as radians.
    public static func radians(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("RADIANS", expression) }
    /// Rounds to the nearest integer, or to `digits` decimals.
    public static func round(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ROUND", expression) }
    /// Rounds to the nearest integer, or to `digits` decimals.
    public static func round(_ expression: any ExpressionProtocol, digits: any ExpressionProtocol) -> any ExpressionProtocol {
        call("ROUND", expression, digits)
    }
    /// -1, 0 or 1 by the sign of the number.
    public static func sign(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SIGN", expression) }
    /// The sine of an angle in radians.
    public static func sin(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SIN", expression) }
    /// The square root.
    public static func sqrt(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("SQRT", expression) }
    /// The tangent of an angle in radians.
    public static func tan(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("TAN", expression) }
    /// Drops the fraction, or keeps `digits` decimals.
    public static func trunc(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("TRUNC", expression) }
    /// Drops the fraction, or keeps `digits` decimals.
    public static func trunc(_ expression: any ExpressionProtocol, digits: any ExpressionProtocol) -> any ExpressionProtocol {
        call("TRUNC", expression, digits)
    }

    // MARK: Strings

    /// Whether the string contains `substring`.
    public static func contains(_ expression: any ExpressionProtocol, substring: any ExpressionProtocol) -> any ExpressionProtocol {
        call("CONTAINS", expression, substring)
    }
    /// The number of characters.
    public static func length(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LENGTH", expression) }
    /// The string in lower case.
    public static func lower(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LOWER", expression) }
    /// The string without leading whitespace.
    public static func ltrim(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("LTRIM", expression) }
    /// The string without trailing whitespace.
    public static func rtrim(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("RTRIM", expression) }
    /// The string without leading and trailing whitespace.
    public static func trim(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("TRIM", expression) }
    /// The string in upper case.
    public static func upper(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("UPPER", expression) }

    // MARK: Dates

    /// Milliseconds since 1970 as ISO-8601 text (UTC).
    public static func millisToString(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("MILLIS_TO_STR", expression)
    }
    /// Milliseconds since 1970 as ISO-8601 text in UTC.
    public static func millisToUTC(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("MILLIS_TO_UTC", expression)
    }
    /// ISO-8601 text as milliseconds since 1970.
    public static func stringToMillis(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("STR_TO_MILLIS", expression)
    }
    /// ISO-8601 text converted to UTC.
    public static func stringToUTC(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        call("STR_TO_UTC", expression)
    }

    // MARK: Types

    /// The first of the expressions that is valued.
    public static func ifMissingOrNull(_ expressions: any ExpressionProtocol...) -> any ExpressionProtocol {
        BuiltExpression(.function("IFMISSINGORNULL", expressions.map(\.node), distinct: false))
    }
    /// Whether the value is an array.
    public static func isArray(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISARRAY", expression) }
    /// Whether the value is a dictionary.
    public static func isDictionary(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISOBJECT", expression) }
    /// Whether the value is a number.
    public static func isNumber(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISNUMBER", expression) }
    /// Whether the value is a string.
    public static func isString(_ expression: any ExpressionProtocol) -> any ExpressionProtocol { call("ISSTRING", expression) }
    /// Whether the value is a Boolean.
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
