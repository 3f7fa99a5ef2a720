/// What a ``QueryBuilder`` query reads: a collection.
public protocol DataSourceProtocol: Sendable {}

/// A data source that can be given an alias with ``as(_:)``.
public protocol DataSourceAs: DataSourceProtocol {
    /// The name expressions use for this source (`Expression.property("name").from(alias)`).
    func `as`(_ alias: String) -> any DataSourceProtocol
}

/// Makes the data sources of ``QueryBuilder`` queries.
///
/// ```swift
/// QueryBuilder.select(SelectResult.all()).from(DataSource.collection(tasks).as("t"))
/// ```
public enum DataSource {
    /// A collection; its alias is the collection's name unless ``DataSourceAs/as(_:)`` gives another.
    public static func collection(_ collection: Collection) -> any DataSourceAs {
        BuiltDataSource(
            database: collection.database, source: .init(scope: collection.scope.name, collection: collection.name))
    }

    /// A database's default collection; its alias is the database's name.
    public static func database(_ database: Database) -> any DataSourceAs {
        BuiltDataSource(database: database, source: .init(scope: nil, collection: "_"))
    }
}

struct BuiltDataSource: DataSourceAs {
    let database: Database
    let source: SelectStatement.Source

    func `as`(_ alias: String) -> any DataSourceProtocol {
        BuiltDataSource(database: database, source: .init(scope: source.scope, collection: source.collection, alias: alias))
    }
}
