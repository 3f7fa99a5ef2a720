/// A ``QueryBuilder`` stage that a `JOIN` may follow.
public protocol JoinRouter: Query {}
/// A ``QueryBuilder`` stage that a `WHERE` may follow.
public protocol WhereRouter: Query {}
/// A ``QueryBuilder`` stage that a `GROUP BY` may follow.
public protocol GroupByRouter: Query {}
/// A ``QueryBuilder`` stage that a `HAVING` may follow.
public protocol HavingRouter: Query {}
/// A ``QueryBuilder`` stage that an `ORDER BY` may follow.
public protocol OrderByRouter: Query {}
/// A ``QueryBuilder`` stage that a `LIMIT` may follow.
public protocol LimitRouter: Query {}

extension JoinRouter {
    /// Joins other data sources.
    public func join(_ joins: any JoinProtocol...) -> Joins { join(joins) }

    /// Joins other data sources.
    public func join(_ joins: [any JoinProtocol]) -> Joins {
        Joins(after: self) { statement in
            statement.joins += joins.map {
                ($0 as? BuiltJoin)?.join
                    ?? .init(
                        source: .init(scope: nil, collection: "", invalid: "Only Join makes the joins of a QueryBuilder query"),
                        leftOuter: false, on: nil)
            }
        }
    }
}

extension WhereRouter {
    /// Keeps the rows for which the condition holds.
    public func `where`(_ expression: any ExpressionProtocol) -> Where {
        Where(after: self) { $0.whereClause = expression.node }
    }
}

extension GroupByRouter {
    /// One row per distinct value of the expressions; select them and aggregates.
    public func groupBy(_ expressions: any ExpressionProtocol...) -> GroupBy { groupBy(expressions) }

    /// One row per distinct value of the expressions; select them and aggregates.
    public func groupBy(_ expressions: [any ExpressionProtocol]) -> GroupBy {
        GroupBy(after: self) { $0.groupBy = expressions.map(\.node) }
    }
}

extension HavingRouter {
    /// Keeps the groups for which the condition holds.
    public func having(_ expression: any ExpressionProtocol) -> Having {
        Having(after: self) { $0.having = expression.node }
    }
}

extension OrderByRouter {
    /// Sorts the rows.
    public func orderBy(_ orderings: any OrderingProtocol...) -> OrderBy { orderBy(orderings) }

    /// Sorts the rows.
    public func orderBy(_ orderings: [any OrderingProtocol]) -> OrderBy {
        OrderBy(after: self) { $0.orderBy = orderings.map(\.ordering) }
    }
}

extension LimitRouter {
    /// At most `limit` rows, after skipping `offset` rows.
    public func limit(_ limit: any ExpressionProtocol, offset: (any ExpressionProtocol)? = nil) -> Limit {
        Limit(after: self) { statement in
            statement.limit = limit.node
            statement.offset = offset?.node
        }
    }
}
