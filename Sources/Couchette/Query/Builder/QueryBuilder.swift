/// Builds queries from typed pieces instead of SQL++ text (Couchbase Lite 3's `QueryBuilder`). Each stage
/// (``Select``, ``From``, ``Joins``, ``Where``, ``GroupBy``, ``Having``, ``OrderBy``, ``Limit``) is a ``Query``
/// that offers the clauses that may follow it; the query compiles to the same SQL as the SQL++ text it describes.
///
/// ```swift
/// let query = QueryBuilder
///     .select(SelectResult.expression(Meta.id), SelectResult.property("task"))
///     .from(DataSource.collection(tasks))
///     .where(Expression.property("taskList.id").equalTo(Expression.parameter("list"))
///         .and(Expression.property("complete").equalTo(Expression.boolean(false))))
///     .orderBy(Ordering.property("task"))
///     .limit(Expression.int(20))
/// query.parameters = Parameters().setString(listID, forName: "list")
/// for result in try query.execute() { print(result.string(forKey: "task") ?? "") }
/// print(query)   // SELECT META().id, task FROM todo.tasks WHERE …
/// ```
public enum QueryBuilder {
    /// `SELECT` these columns.
    public static func select(_ results: any SelectResultProtocol...) -> Select { select(results) }

    /// `SELECT` these columns.
    public static func select(_ results: [any SelectResultProtocol]) -> Select {
        Select(database: nil, statement: SelectStatement(columns: results.map(\.column)))
    }

    /// `SELECT DISTINCT` these columns: equal rows once.
    public static func selectDistinct(_ results: any SelectResultProtocol...) -> Select { selectDistinct(results) }

    /// `SELECT DISTINCT` these columns: equal rows once.
    public static func selectDistinct(_ results: [any SelectResultProtocol]) -> Select {
        Select(database: nil, statement: SelectStatement(distinct: true, columns: results.map(\.column)))
    }
}

/// The `SELECT` stage of a ``QueryBuilder`` query; ``from(_:)`` names the collection it reads.
public final class Select: Query, @unchecked Sendable {
    /// `FROM` a data source.
    public func from(_ dataSource: any DataSourceProtocol) -> From {
        From(after: self, database: (dataSource as? BuiltDataSource)?.database) { $0.from = dataSource.source }
    }
}

/// The `FROM` stage of a ``QueryBuilder`` query.
public final class From: Query, JoinRouter, WhereRouter, GroupByRouter, OrderByRouter, LimitRouter, @unchecked Sendable {}

/// The `JOIN` stage of a ``QueryBuilder`` query.
public final class Joins: Query, WhereRouter, GroupByRouter, OrderByRouter, LimitRouter, @unchecked Sendable {}

/// The `WHERE` stage of a ``QueryBuilder`` query.
public final class Where: Query, GroupByRouter, OrderByRouter, LimitRouter, @unchecked Sendable {}

/// The `GROUP BY` stage of a ``QueryBuilder`` query.
public final class GroupBy: Query, HavingRouter, OrderByRouter, LimitRouter, @unchecked Sendable {}

/// The `HAVING` stage of a ``QueryBuilder`` query.
public final class Having: Query, OrderByRouter, LimitRouter, @unchecked Sendable {}

/// The `ORDER BY` stage of a ``QueryBuilder`` query.
public final class OrderBy: Query, LimitRouter, @unchecked Sendable {}

/// The `LIMIT` stage of a ``QueryBuilder`` query, its last.
public final class Limit: Query, @unchecked Sendable {}
