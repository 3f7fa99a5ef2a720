import CouchetteCore
import CouchetteSQLite
import Foundation

/// A compiled SQL++ query (Couchbase Lite 3): `SELECT` over the database's collections, run any number of times, with
/// `$name` parameters bound at each run.
///
/// ```swift
/// let query = try db.createQuery("SELECT META().id, name FROM _ WHERE type = $type ORDER BY name")
/// query.parameters = Parameters().setString("task-list", forName: "type")
/// for result in try query.execute() { print(result.string(forKey: "id") ?? "", result.string(forKey: "name") ?? "") }
/// ```
public class Query: @unchecked Sendable, CustomStringConvertible {
    /// The database the query reads; nil for a ``QueryBuilder`` query before its `from`.
    public let database: Database?
    let statement: SelectStatement
    private let text: String?
    private let lock = NSLock()
    private var compiled: CompiledQuery?
    private var storedParameters: Parameters?
    private var observer: QueryObserver<ResultSet>?

    init(database: Database?, statement: SelectStatement, text: String? = nil) {
        self.database = database
        self.statement = statement
        self.text = text
    }

    /// The next stage of a ``QueryBuilder`` query: this one's statement changed by `change`, and its parameters.
    convenience init(after previous: Query, database: Database? = nil, _ change: (inout SelectStatement) -> Void) {
        var statement = previous.statement
        change(&statement)
        self.init(database: database ?? previous.database, statement: statement)
        storedParameters = previous.parameters
    }

    /// The parameter values of the next runs; setting them runs live listeners again.
    public var parameters: Parameters? {
        get { lock.withLock { storedParameters } }
        set {
            let observer = lock.withLock { () -> QueryObserver<ResultSet>? in
                storedParameters = newValue.map { Parameters(parameters: $0) }
                return self.observer
            }
            observer?.rerun()
        }
    }

    /// Runs the query.
    ///
    /// - Throws: `.badInput` for an unknown function or field, `.notFound` for an unknown collection, `.notOpen` once
    ///   the database is closed.
    public func execute() throws -> ResultSet {
        let compiled = try compile()
        let database = try requireDatabase()
        let values = parameters?.all ?? [:]
        let collection = try? database.defaultCollection()
        var bindings = compiled.parameterNames.map { name in (name: ":p_\(name)", value: Self.sqlValue(values[name] ?? .null)) }
        for name in compiled.jsonParameterNames {
            bindings.append((":j_\(name)", values[name].map { SQLiteValue.text($0.serializedString()) } ?? .null))
        }
        let rows: [QueryResult] = try database.read { storage in
            var rows: [QueryResult] = []
            try storage.forEachRow(ofQuery: compiled.sql, bindings: bindings) { row in
                rows.append(QueryResult(columns: compiled.resultColumns, values: compiled.values(of: row), collection: collection))
            }
            return rows
        }
        return ResultSet(rows: rows, columnNames: compiled.columns.map(\.name))
    }

    /// The SQLite statement the query runs and SQLite's plan for it (`EXPLAIN QUERY PLAN`), so an index in use shows
    /// as `USING INDEX <name>`.
    public func explain() throws -> String {
        let compiled = try compile()
        // On the writer: a reader's `EXPLAIN` is planned with the schema that connection last loaded (an EXPLAIN
        // reads no table, so nothing tells it an index was made since).
        let plan = try requireDatabase().withStorage { storage in try storage.queryPlan(of: compiled.sql) }
        return compiled.sql + "\n\n" + plan.joined(separator: "\n") + "\n"
    }

    /// The query's SQL++ text: as given to ``Database/createQuery(_:)``, or what a ``QueryBuilder`` query says.
    public var description: String { text ?? statement.text }

    /// The database, or `.badInput` for a builder query that has no `FROM` yet.
    func requireDatabase() throws -> Database {
        guard let database else {
            throw CouchetteError(
                .badInput, message: statement.from?.invalid ?? "A query needs a FROM clause naming a collection")
        }
        return database
    }

    /// The compiled form, made on first use (collections are looked up then).
    func compile() throws -> CompiledQuery {
        if let compiled = lock.withLock({ self.compiled }) { return compiled }
        let made = try QueryCompiler.compile(statement, database: try requireDatabase())
        lock.withLock { compiled = made }
        return made
    }

    // MARK: - Live queries

    /// Runs the query now and again after each commit to the collections it reads, calling `listener` each time the
    /// results differ (the first run included); bursts of commits make one re-run. Each listener gets results of its
    /// own to read in full, and the listener keeps the query running until it is removed.
    ///
    /// - Parameter queue: Where to call it; a private serial queue when nil.
    @discardableResult
    public func addChangeListener(
        withQueue queue: DispatchQueue? = nil, _ listener: @escaping @Sendable (QueryChange) -> Void
    ) -> ListenerToken {
        let target = ListenerQueue.resolve(queue)
        do {
            return try liveObserver().addListener(replayLatest: true) { [self] event in
                switch event {
                case .result(let results):
                    let own = results.unread()
                    target.async { listener(QueryChange(query: self, results: own, error: nil)) }
                case .failure(let error): target.async { listener(QueryChange(query: self, results: nil, error: error)) }
                case .ended: break
                }
            }
        } catch {
            let failure = CouchetteError.wrap(error)
            target.async { listener(QueryChange(query: self, results: nil, error: failure)) }
            return ListenerToken(id: 0) { _ in }
        }
    }

    /// Removes a listener added by ``addChangeListener(withQueue:_:)``; the same as `token.remove()`.
    public func removeChangeListener(withToken token: ListenerToken) {
        token.remove()
    }

    /// The results now, then again after each commit that changes them; ends when the database closes or the iterating
    /// task is cancelled, and throws a run's error.
    ///
    /// The stream keeps the query running while it is iterated, so `try db.createQuery(…).changes()` needs no other
    /// reference to the query; the query is let go when the consumer stops or is cancelled.
    public func changes() -> AsyncThrowingStream<ResultSet, any Error> {
        AsyncThrowingStream { continuation in
            do {
                let token = try liveObserver().addListener(replayLatest: true) { event in
                    switch event {
                    case .result(let results): continuation.yield(results.unread())
                    case .failure(let error): continuation.finish(throwing: error)
                    case .ended: continuation.finish()
                    }
                }
                continuation.onTermination = { _ in
                    token.remove()
                    withExtendedLifetime(self) {}
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    private func liveObserver() throws -> QueryObserver<ResultSet> {
        let database = try requireDatabase()
        return lock.withLock {
            if let observer { return observer }
            let ids = (try? QueryCompiler.compile(statement, database: database).collectionIDs) ?? []
            let made = QueryObserver<ResultSet>(
                database: database, collectionIDs: ids, minimumInterval: 0, run: { [weak self] in
                    guard let self else { throw CouchetteError(.notOpen, message: "The query is gone") }
                    return try self.execute()
                },
                isSame: { old, new in
                    old.everyRow.count == new.everyRow.count
                        && zip(old.everyRow, new.everyRow).allSatisfy { $0.values == $1.values }
                })
            observer = made
            return made
        }
    }

    // MARK: - Values

    static func sqlValue(_ value: JSONValue) -> SQLiteValue {
        switch value {
        case .null: .null
        case .bool(let flag): .integer(flag ? 1 : 0)
        case .int(let number): .integer(number)
        case .double(let number): .real(number)
        case .string(let text): .text(text)
        case .array, .object: .text(value.serializedString())
        }
    }
}

/// What a query's change listener receives: the new results, or the error of the run.
public struct QueryChange: Sendable {
    public let query: Query
    public let results: ResultSet?
    public let error: CouchetteError?
}

extension Database {
    /// Compiles a SQL++ query (`SELECT … FROM collection …`).
    ///
    /// - Throws: `.badInput` (400) for a syntax error, naming its position and what was expected.
    public func createQuery(_ query: String) throws -> Query {
        Query(database: self, statement: try QueryParser.parse(query), text: query)
    }
}
