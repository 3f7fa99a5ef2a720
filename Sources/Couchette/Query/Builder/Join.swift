/// A join of a ``QueryBuilder`` query.
public protocol JoinProtocol: Sendable {}

/// A join waiting for its condition.
public protocol JoinOnProtocol: JoinProtocol {
    /// The condition that pairs rows of the joined source with rows of the sources before it.
    func on(_ expression: any ExpressionProtocol) -> any JoinProtocol
}

/// Makes the joins of ``QueryBuilder`` queries.
///
/// ```swift
/// QueryBuilder.select(SelectResult.property("task").from("t"), SelectResult.property("name").from("l"))
///     .from(DataSource.collection(tasks).as("t"))
///     .join(Join.join(DataSource.collection(lists).as("l"))
///         .on(Meta.id.from("l").equalTo(Expression.property("taskList.id").from("t"))))
/// ```
public enum Join {
    /// An inner join: rows with a match only.
    public static func join(_ dataSource: any DataSourceProtocol) -> any JoinOnProtocol { BuiltJoin(dataSource, leftOuter: false) }
    /// An inner join.
    public static func innerJoin(_ dataSource: any DataSourceProtocol) -> any JoinOnProtocol { join(dataSource) }
    /// A left outer join: every row of the sources before it, with the joined source's properties missing where
    /// nothing matches.
    public static func leftJoin(_ dataSource: any DataSourceProtocol) -> any JoinOnProtocol { BuiltJoin(dataSource, leftOuter: true) }
    /// A left outer join.
    public static func leftOuterJoin(_ dataSource: any DataSourceProtocol) -> any JoinOnProtocol { leftJoin(dataSource) }
    /// Every pairing of rows.
    public static func crossJoin(_ dataSource: any DataSourceProtocol) -> any JoinProtocol { BuiltJoin(dataSource, leftOuter: false) }
}

struct BuiltJoin: JoinOnProtocol {
    let join: SelectStatement.Join

    init(_ dataSource: any DataSourceProtocol, leftOuter: Bool) {
        join = .init(source: dataSource.source, leftOuter: leftOuter, on: nil)
    }

    private init(join: SelectStatement.Join) {
        self.join = join
    }

    func on(_ expression: any ExpressionProtocol) -> any JoinProtocol {
        BuiltJoin(join: .init(source: join.source, leftOuter: join.leftOuter, on: expression.node))
    }
}

extension DataSourceProtocol {
    var source: SelectStatement.Source {
        (self as? BuiltDataSource)?.source
            ?? .init(scope: nil, collection: "", invalid: "Only DataSource makes the data sources of a QueryBuilder query")
    }
}
