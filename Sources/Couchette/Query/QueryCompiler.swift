import CouchetteCore
import Foundation

/// A query compiled to SQLite SQL over the `documents` table: properties become `json_extract` of a body, `ANY`/
/// `EVERY` become `json_each` subqueries, parameters stay bound parameters (`:p_name` for the value, `:j_name` for its
/// JSON) and are never spliced into the text.
struct CompiledQuery: Sendable {
    /// How a result column's SQL value becomes JSON.
    enum ColumnKind: Sendable {
        /// JSON text (NULL: the value is missing).
        case json
        /// A plain SQL value (NULL: null).
        case value
        /// 0 or 1.
        case boolean
        /// A property read with `json_extract` (a plain SQL value), followed by a second SQL column: its JSON type,
        /// or NULL where the value alone says it (not 0, 1, NULL, or text starting with `{` or `[`).
        case extracted
        /// A property found in the SQL column holding its document's body (``JSONPathScanner``); several columns
        /// share one body.
        case scanned([JSONPathScanner.Step])
    }

    struct Column: Sendable {
        var name: String
        var kind: ColumnKind
        /// Where the column's value is in the SQL row.
        var sqlIndex: Int
    }

    var sql: String
    /// The result columns; an `.extracted` one takes two SQL columns.
    let columns: [Column]
    /// The columns' names and positions, shared by the rows of every run.
    let resultColumns: ResultColumns
    /// Parameters bound as SQL values (`:p_name`) and as JSON text (`:j_name`).
    var parameterNames: Set<String>
    var jsonParameterNames: Set<String>
    var collectionIDs: [Int64]

    init(
        sql: String, columns: [Column], parameterNames: Set<String>, jsonParameterNames: Set<String>,
        collectionIDs: [Int64]
    ) {
        self.sql = sql
        self.columns = columns
        resultColumns = ResultColumns(columns.map(\.name))
        self.parameterNames = parameterNames
        self.jsonParameterNames = jsonParameterNames
        self.collectionIDs = collectionIDs
    }
}

/// Compiles a ``SelectStatement`` for one database.
struct QueryCompiler {
    /// A data source of the query: the user's alias, the SQL alias, and its collection.
    private struct Source {
        var name: String
        var sqlAlias: String
        var collection: Collection
    }

    private let database: Database
    private var sources: [Source] = []
    /// `ANY`/`EVERY` variables in scope: name → SQL alias of their `json_each`.
    private var variables: [String: String] = [:]
    private var nextVariable = 0
    private var parameterNames: Set<String> = []
    private var jsonParameterNames: Set<String> = []
    /// The SQL of the value indexes of the sources' collections, read once when a result column needs it.
    private var indexDefinitions: [Int64: [String]] = [:]
    /// The collation of the `COLLATE` being compiled, for the comparisons inside it.
    private var collation: QueryExpression.Collation?

    /// ` COLLATE name` for the left operand of a comparison inside a `COLLATE`, or nothing.
    private var collated: String { collation.map { " COLLATE \($0.sqlName)" } ?? "" }
    /// Whether result properties may be found in the bodies in Swift (see `compile`).
    private var scansBodies = false
    private var includesDeleted = false
    /// The search terms of the `MATCH(index, terms)` calls of the WHERE clause, by index (for `RANK(index)`).
    private var matchTerms: [String: QueryExpression] = [:]

    init(database: Database) {
        self.database = database
    }

    static func compile(_ statement: SelectStatement, database: Database) throws -> CompiledQuery {
        var compiler = QueryCompiler(database: database)
        return try compiler.compile(statement)
    }

    private mutating func compile(_ statement: SelectStatement) throws -> CompiledQuery {
        guard let from = statement.from else {
            throw CouchetteError(.badInput, message: "A query needs a FROM clause naming a collection")
        }
        sources.append(try source(from, index: 0))
        for (index, join) in statement.joins.enumerated() { sources.append(try source(join.source, index: index + 1)) }
        if Set(sources.map(\.name)).count != sources.count {
            throw CouchetteError(.badInput, message: "Each data source needs a distinct name (use AS)")
        }
        includesDeleted = Self.mentionsDeleted(statement)
        _ = statement.whereClause?.contains { expression in
            if case .function("MATCH", let arguments, _) = expression, arguments.count == 2,
                let (source, name) = fullTextIndex(arguments[0])
            {
                matchTerms["\(source.sqlAlias)/\(name)"] = arguments[1]
            }
            return false
        }

        var columns: [CompiledQuery.Column] = []
        var selected: [String] = []
        // Properties are found in the documents' bodies in Swift, unless SQL must compare the values (DISTINCT,
        // grouping): one SQL column per body instead of a JSON lookup per property.
        scansBodies = !statement.distinct && statement.groupBy.isEmpty
            && !statement.columns.contains { $0.expression.contains(where: Self.isAggregate) }
        for (position, column) in statement.columns.enumerated() {
            for (sql, kind, name) in try resultColumns(column.expression, position: position) {
                var sqlIndex = selected.count
                if case .scanned = kind, let shared = selected.firstIndex(of: sql[0]) {
                    sqlIndex = shared
                } else {
                    selected += sql
                }
                columns.append(.init(name: column.alias ?? name, kind: kind, sqlIndex: sqlIndex))
            }
        }
        var sql = "SELECT \(statement.distinct ? "DISTINCT " : "")" + selected.joined(separator: ", ")
        let main = sources[0]
        sql += " FROM documents AS \(main.sqlAlias)"
        for (index, join) in statement.joins.enumerated() {
            let source = sources[index + 1]
            var condition = sourceFilter(source)
            if let on = join.on { condition += " AND (\(try value(on)))" }
            sql += " \(join.leftOuter ? "LEFT JOIN" : "JOIN") documents AS \(source.sqlAlias) ON \(condition)"
        }
        sql += " WHERE \(sourceFilter(main))"
        if let whereClause = statement.whereClause { sql += " AND (\(try value(whereClause)))" }
        if !statement.groupBy.isEmpty {
            sql += " GROUP BY " + (try statement.groupBy.map { try sortKey($0, statement) }).joined(separator: ", ")
        }
        if let having = statement.having { sql += " HAVING \(try value(having))" }
        if !statement.orderBy.isEmpty {
            sql += " ORDER BY "
                + (try statement.orderBy.map { "\(try sortKey($0.expression, statement)) \($0.descending ? "DESC" : "ASC")" })
                .joined(separator: ", ")
        }
        if let limit = statement.limit {
            sql += " LIMIT \(try value(limit))"
            if let offset = statement.offset { sql += " OFFSET \(try value(offset))" }
        } else if let offset = statement.offset {
            sql += " LIMIT -1 OFFSET \(try value(offset))"
        }
        return CompiledQuery(
            sql: sql, columns: columns, parameterNames: parameterNames, jsonParameterNames: jsonParameterNames,
            collectionIDs: sources.map(\.collection.id))
    }

    /// Compiles one expression on its own (for index definitions): properties read `"documents".body`.
    static func indexExpression(_ expression: QueryExpression, database: Database, collection: Collection) throws -> String {
        var compiler = QueryCompiler(database: database)
        compiler.sources = [Source(name: collection.name, sqlAlias: "\"documents\"", collection: collection)]
        let sql = try compiler.value(expression)
        guard compiler.parameterNames.isEmpty, compiler.jsonParameterNames.isEmpty else {
            throw CouchetteError(.badInput, message: "An index expression cannot use parameters")
        }
        return sql
    }

    // MARK: - Sources

    private func source(_ source: SelectStatement.Source, index: Int) throws -> Source {
        if let invalid = source.invalid { throw CouchetteError(.badInput, message: invalid) }
        let collection: Collection?
        switch (source.scope, source.collection) {
        case (nil, "_"), (nil, Database.defaultCollectionName):
            collection = try database.defaultCollection()
        case (nil, let name) where name == database.name:
            collection = try database.defaultCollection()
        case (nil, let name):
            collection = try database.collection(name: name)
        case (let scope?, let name):
            collection = try database.collection(name: name, scope: scope)
        }
        guard let collection else {
            let full = [source.scope, source.collection].compactMap { $0 }.joined(separator: ".")
            throw CouchetteError(.notFound, message: "No collection \(full) in database \(database.name)")
        }
        let name = source.alias ?? (source.collection == "_" ? database.name : source.collection)
        return Source(name: name, sqlAlias: "\"s\(index)\"", collection: collection)
    }

    /// The rows of a source: its collection, and live documents unless the query looks at `META().deleted`.
    private func sourceFilter(_ source: Source) -> String {
        let alias = source.sqlAlias
        return includesDeleted
            ? "\(alias).collection = \(source.collection.id)"
            : "\(alias).collection = \(source.collection.id) AND (\(alias).flags & 1) = 0"
    }

    private static func mentionsDeleted(_ statement: SelectStatement) -> Bool {
        var expressions = statement.columns.map(\.expression) + statement.groupBy + statement.orderBy.map(\.expression)
        expressions += [statement.whereClause, statement.having].compactMap { $0 } + statement.joins.compactMap(\.on)
        return expressions.contains { $0.contains(where: { if case .meta(_, let field) = $0 { field.lowercased() == "deleted" } else { false } }) }
    }

    // MARK: - Result columns

    private mutating func resultColumns(_ expression: QueryExpression, position: Int) throws -> [(
        [String], CompiledQuery.ColumnKind, String
    )] {
        switch expression {
        case .collate(let subject, _):
            // A collation changes comparisons and order, not the value.
            return try resultColumns(subject, position: position)
        case .star(let alias):
            let chosen = try alias.map { [try namedSource($0)] } ?? sources
            return chosen.map { (["\($0.sqlAlias).body"], .json, $0.name) }
        case .path(let steps):
            let name: String
            switch steps.last {
            case .key(let key)?: name = key
            default: name = "$\(position + 1)"
            }
            return [try propertyColumn(steps, name: name) ?? ([try json(expression)], .json, name)]
        case .meta(_, let field):
            return [([try value(expression)], field == "deleted" ? .boolean : .value, field)]
        case .literal, .array, .object, .parameter, .missing:
            return [([try json(expression)], .json, "$\(position + 1)")]
        default:
            return [([try value(expression)], Self.isBoolean(expression) ? .boolean : .value, "$\(position + 1)")]
        }
    }

    /// An `ORDER BY` or `GROUP BY` term. `ORDER BY 2` is the second result column's expression; any other integer
    /// is a constant (SQLite would take an integer as a position in its own select list, which differs from the
    /// query's: properties may share a body column, indexed ones add a type column).
    private mutating func sortKey(_ expression: QueryExpression, _ statement: SelectStatement) throws -> String {
        guard case .literal(.int(let position)) = expression else { return try value(expression) }
        if position >= 1, position <= statement.columns.count {
            let column = statement.columns[Int(position) - 1].expression
            if case .star = column {} else { return try value(column) }
        }
        return "CAST(\(position) AS INTEGER)"
    }

    /// A property of a data source, read from a value index when one has it (`json_extract` and, when the value is
    /// ambiguous, its JSON type), else found in the body by Swift when allowed; nil for anything else.
    private mutating func propertyColumn(_ steps: [QueryExpression.PathStep], name: String) throws -> (
        [String], CompiledQuery.ColumnKind, String
    )? {
        let (base, rest) = try resolve(steps)
        guard !rest.isEmpty, let source = sources.first(where: { base.json == "\($0.sqlAlias).body" }) else { return nil }
        let path = try Self.jsonPath(rest)
        if try indexes(of: source.collection).contains(where: { $0.contains("json_extract(body, \(path))") }) {
            let value = "json_extract(\(base.json), \(path))"
            let ambiguous = "coalesce(\(value) IN (0, 1), 1) OR (typeof(\(value)) = 'text' AND substr(\(value), 1, 1) IN ('{', '['))"
            return ([value, "CASE WHEN \(ambiguous) THEN json_type(\(base.json), \(path)) END"], .extracted, name)
        }
        guard scansBodies else { return nil }
        let scanned = rest.map { step -> JSONPathScanner.Step in
            switch step {
            case .key(let key): JSONPathScanner.Step(key)
            case .index(let index): .index(index)
            }
        }
        return ([base.json], .scanned(scanned), name)
    }

    private static func isAggregate(_ expression: QueryExpression) -> Bool {
        if case .function(let name, _, _) = expression { return ["COUNT", "SUM", "AVG", "MIN", "MAX"].contains(name) }
        return false
    }

    /// The SQL of a collection's value indexes.
    private mutating func indexes(of collection: Collection) throws -> [String] {
        if let known = indexDefinitions[collection.id] { return known }
        let found = try collection.valueIndexDefinitions()
        indexDefinitions[collection.id] = found
        return found
    }

    private static func isBoolean(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .binary(let op, _, _):
            ["=", "!=", "<", "<=", ">", ">=", "AND", "OR", "LIKE", "NOT LIKE", "IN", "NOT IN", "IS", "IS NOT"].contains(op)
        case .unary("NOT", _), .between, .check, .quantified: true
        case .collate(let subject, _): isBoolean(subject)
        case .function(let name, _, _):
            name.hasPrefix("IS") || ["CONTAINS", "ARRAY_CONTAINS", "MATCH", "REGEXP_CONTAINS", "REGEXP_LIKE"].contains(name)
        default: false
        }
    }

    private func namedSource(_ name: String) throws -> Source {
        guard let source = sources.first(where: { $0.name == name }) else {
            throw CouchetteError(.badInput, message: "No data source named \(name) in the query")
        }
        return source
    }

    // MARK: - Expressions as SQL values

    /// The expression as an SQL value: strings, numbers, 1/0 for Booleans, NULL for null and missing, JSON text for
    /// arrays and objects.
    mutating func value(_ expression: QueryExpression) throws -> String {
        switch expression {
        case .literal(let literal): return Self.sqlLiteral(literal)
        case .missing: return "NULL"
        case .array, .object: return try json(expression)
        case .path(let steps):
            let (base, rest) = try resolve(steps)
            return rest.isEmpty ? base.value : "json_extract(\(base.json), \(try Self.jsonPath(rest)))"
        case .meta(let alias, let field): return try meta(alias: alias, field: field)
        case .parameter(let name):
            parameterNames.insert(name)
            return ":p_\(name)"
        case .star: throw CouchetteError(.badInput, message: "* is only allowed in the select list and COUNT(*)")
        case .invalid(let reason): throw CouchetteError(.badInput, message: reason)
        case .collate(let subject, let chosen):
            let outer = collation
            collation = chosen
            defer { collation = outer }
            return "(\(try value(subject)) COLLATE \(chosen.sqlName))"
        case .unary("NOT", let operand): return "(NOT \(try value(operand)))"
        case .unary(let op, let operand): return "(\(op) \(try value(operand)))"  // "- -1", never "--1" (a comment)
        case .binary(let op, let left, let right): return try binary(op, left, right)
        case .between(let subject, let low, let high, let negated):
            return "(\(try value(subject))\(collated) \(negated ? "NOT " : "")BETWEEN \(try value(low)) AND \(try value(high)))"
        case .check(let subject, let check, let negated):
            let type = try jsonType(subject)
            let test: String
            switch check {
            case .null: test = "\(type) = 'null'"
            case .missing: test = "\(type) IS NULL"
            case .valued: test = "coalesce(\(type) != 'null', 0)"
            }
            return negated ? "(NOT (\(test)))" : "(\(test))"
        case .function(let name, let arguments, let distinct): return try function(name, arguments, distinct: distinct)
        case .quantified(let quantifier, let variable, let list, let condition):
            return try quantified(quantifier, variable: variable, list: list, condition: condition)
        case .caseWhen(let subject, let branches, let otherwise):
            var sql = "CASE"
            if let subject { sql += " \(try value(subject))" }
            for branch in branches { sql += " WHEN \(try value(branch.when)) THEN \(try value(branch.then))" }
            if let otherwise { sql += " ELSE \(try value(otherwise))" }
            return sql + " END"
        }
    }

    /// The expression as JSON text (NULL when missing).
    mutating func json(_ expression: QueryExpression) throws -> String {
        switch expression {
        case .literal(let literal): return Self.sqlString(literal.serializedString())
        case .missing: return "NULL"
        case .array(let elements):
            return "json_array(\(try elements.map { "json(\(try json($0)))" }.joined(separator: ", ")))"
        case .object(let members):
            let pairs = try members.map { "\(Self.sqlString($0.name)), json(\(try json($0.value)))" }
            return "json_object(\(pairs.joined(separator: ", ")))"
        case .path(let steps):
            let (base, rest) = try resolve(steps)
            return rest.isEmpty ? base.json : "(\(base.json) -> \(try Self.jsonPath(rest)))"
        case .parameter(let name):
            jsonParameterNames.insert(name)
            return ":j_\(name)"
        case .collate(let subject, _):
            return try json(subject)
        default:
            let sql = try value(expression)
            return Self.isBoolean(expression)
                ? "CASE \(sql) WHEN 1 THEN 'true' WHEN 0 THEN 'false' END" : "json_quote(\(sql))"
        }
    }

    /// SQL giving the JSON type of the expression (`null`, `true`, `false`, `integer`, `real`, `text`, `array`,
    /// `object`), or NULL when it is missing.
    private mutating func jsonType(_ expression: QueryExpression) throws -> String {
        switch expression {
        case .path(let steps):
            let (base, rest) = try resolve(steps)
            if rest.isEmpty { return base.type }
            return "json_type(\(base.json), \(try Self.jsonPath(rest)))"
        case .missing: return "NULL"
        case .collate(let subject, _): return try jsonType(subject)
        default: return "json_type(\(try json(expression)))"
        }
    }

    /// What the first step of a path names, and the rest of the path.
    private func resolve(_ steps: [QueryExpression.PathStep]) throws -> (
        base: (value: String, json: String, type: String), rest: [QueryExpression.PathStep]
    ) {
        if case .key(let first)? = steps.first {
            if let variable = variables[first] {
                let json = "CASE WHEN \(variable).type IN ('object', 'array') THEN \(variable).value ELSE json_quote(\(variable).value) END"
                return ((value: "\(variable).value", json: json, type: "\(variable).type"), Array(steps.dropFirst()))
            }
            if sources.count > 1 || steps.count > 1, let source = sources.first(where: { $0.name == first }) {
                let body = "\(source.sqlAlias).body"
                return ((value: body, json: body, type: "'object'"), Array(steps.dropFirst()))
            }
        }
        let body = "\(sources[0].sqlAlias).body"
        return ((value: body, json: body, type: "'object'"), steps)
    }

    private func meta(alias: String?, field: String) throws -> String {
        let source = try alias.map { try namedSource($0) } ?? sources[0]
        let table = source.sqlAlias
        switch field.lowercased() {
        case "id": return "\(table).doc_id"
        case "sequence": return "\(table).sequence"
        case "deleted": return "((\(table).flags & 1) != 0)"
        case "expiration": return "CAST(\(table).expiration * 1000 AS INTEGER)"
        case "revisionid": return "\(table).rev"
        default:
            throw CouchetteError(
                .badInput, message: "Unknown META() field \(field) (id, sequence, deleted, expiration, revisionID)")
        }
    }

    private mutating func binary(_ op: String, _ left: QueryExpression, _ right: QueryExpression) throws -> String {
        switch op {
        case "IN", "NOT IN":
            let subject = try value(left) + collated
            let list: String
            if case .array(let elements) = right {
                list = try elements.map { try value($0) }.joined(separator: ", ")
            } else {
                list = "SELECT value FROM json_each(\(try json(right)))"
            }
            return "(\(subject) \(op) (\(list)))"
        case "/":
            return "(CAST(\(try value(left)) AS REAL) / \(try value(right)))"
        case "=", "!=", "<", "<=", ">", ">=", "IS", "IS NOT":
            return "(\(try value(left))\(collated) \(op) \(try value(right)))"
        default:
            return "(\(try value(left)) \(op) \(try value(right)))"
        }
    }

    private mutating func quantified(
        _ quantifier: QueryExpression.Quantifier, variable: String, list: QueryExpression, condition: QueryExpression
    ) throws -> String {
        let listJSON = try json(list)
        let alias = "\"v\(nextVariable)\""
        nextVariable += 1
        let saved = variables[variable]
        variables[variable] = alias
        defer { variables[variable] = saved }
        let test = try value(condition)
        let each = "FROM json_each(\(listJSON)) AS \(alias)"
        switch quantifier {
        case .any: return "EXISTS (SELECT 1 \(each) WHERE \(test))"
        case .every: return "NOT EXISTS (SELECT 1 \(each) WHERE NOT coalesce(\(test), 0))"
        case .anyAndEvery:
            return "(EXISTS (SELECT 1 \(each)) AND NOT EXISTS (SELECT 1 \(each) WHERE NOT coalesce(\(test), 0)))"
        }
    }

    // MARK: - Functions

    private mutating func function(_ name: String, _ arguments: [QueryExpression], distinct: Bool) throws -> String {
        func argument(_ index: Int) throws -> String {
            guard index < arguments.count else {
                throw CouchetteError(.badInput, message: "\(name)() needs \(index + 1) argument(s)")
            }
            return try value(arguments[index])
        }
        func jsonArgument(_ index: Int) throws -> String {
            guard index < arguments.count else {
                throw CouchetteError(.badInput, message: "\(name)() needs \(index + 1) argument(s)")
            }
            return try json(arguments[index])
        }
        if name.hasPrefix("REGEXP_"), arguments.count > 1, !Self.isValidPattern(arguments[1]) {
            throw CouchetteError(.badInput, message: "\(name)(): \(arguments[1].text) is not a valid regular expression")
        }
        switch name {
        case "COUNT":
            if arguments.first == .star(alias: nil) { return "count(*)" }
            return "count(\(distinct ? "DISTINCT " : "")\(try argument(0)))"
        case "SUM", "AVG", "MIN", "MAX":
            return "\(name.lowercased())(\(distinct ? "DISTINCT " : "")\(try argument(0)))"
        case "LOWER", "UPPER", "LENGTH", "TRIM", "LTRIM", "RTRIM", "ABS", "SQRT", "EXP", "LN", "SIN", "COS", "TAN",
            "ASIN", "ACOS", "ATAN", "DEGREES", "RADIANS", "SIGN", "CEIL", "FLOOR":
            let sqlName = ["LN": "ln", "CEIL": "ceil", "FLOOR": "floor"][name] ?? name.lowercased()
            return "\(sqlName)(\(try argument(0)))"
        case "TRUNC":
            guard arguments.count > 1 else { return "trunc(\(try argument(0)))" }
            // Rounded to 9 decimals before truncating, so that 0.29 * 100 (28.999999999999996) truncates to 29.
            let scale = "power(10, \(try argument(1)))"
            return "(trunc(round(\(try argument(0)) * \(scale), 9)) / \(scale))"
        case "LOG": return "log10(\(try argument(0)))"
        case "POWER": return "power(\(try argument(0)), \(try argument(1)))"
        // SQL++'s ATAN2(x, y) is the angle of the point (x, y): atan(y / x); SQLite's atan2 takes y first.
        case "ATAN2": return "atan2(\(try argument(1)), \(try argument(0)))"
        case "PI": return "pi()"
        case "E": return "exp(1)"
        case "ROUND":
            return arguments.count > 1 ? "round(\(try argument(0)), \(try argument(1)))" : "round(\(try argument(0)))"
        case "CONTAINS": return "(instr(\(try argument(0)), \(try argument(1))) > 0)"
        case "REPLACE": return "replace(\(try argument(0)), \(try argument(1)), \(try argument(2)))"
        case "SUBSTR":
            // SQL++ positions start at 0.
            let start = "(\(try argument(1)) + 1)"
            return arguments.count > 2 ? "substr(\(try argument(0)), \(start), \(try argument(2)))" : "substr(\(try argument(0)), \(start))"
        case "ARRAY_LENGTH": return "json_array_length(\(try jsonArgument(0)))"
        case "ARRAY_COUNT": return "(SELECT count(value) FROM json_each(\(try jsonArgument(0))) WHERE type != 'null')"
        case "ARRAY_SUM": return "(SELECT total(value) FROM json_each(\(try jsonArgument(0))))"
        case "ARRAY_AVG": return "(SELECT avg(value) FROM json_each(\(try jsonArgument(0))))"
        case "ARRAY_MIN": return "(SELECT min(value) FROM json_each(\(try jsonArgument(0))) WHERE type != 'null')"
        case "ARRAY_MAX": return "(SELECT max(value) FROM json_each(\(try jsonArgument(0))))"
        case "ARRAY_CONTAINS":
            return "EXISTS (SELECT 1 FROM json_each(\(try jsonArgument(0))) WHERE value = \(try argument(1)))"
        case "ISARRAY", "IS_ARRAY": return "(\(try jsonType(arguments[0])) IS 'array')"
        case "ISOBJECT", "IS_OBJECT": return "(\(try jsonType(arguments[0])) IS 'object')"
        case "ISSTRING", "IS_STRING": return "(\(try jsonType(arguments[0])) IS 'text')"
        case "ISNUMBER", "IS_NUMBER": return "(\(try jsonType(arguments[0])) IN ('integer', 'real'))"
        case "ISBOOLEAN", "IS_BOOLEAN": return "(\(try jsonType(arguments[0])) IN ('true', 'false'))"
        case "TYPE":
            let type = try jsonType(arguments[0])
            return "CASE \(type) WHEN 'null' THEN 'null' WHEN 'true' THEN 'boolean' WHEN 'false' THEN 'boolean' "
                + "WHEN 'integer' THEN 'number' WHEN 'real' THEN 'number' WHEN 'text' THEN 'string' "
                + "WHEN 'array' THEN 'array' WHEN 'object' THEN 'object' ELSE 'missing' END"
        case "MILLIS_TO_STR", "MILLIS_TO_UTC":
            return "strftime('%Y-%m-%dT%H:%M:%fZ', \(try argument(0)) / 1000.0, 'unixepoch')"
        case "STR_TO_MILLIS":
            return "CAST(round((julianday(\(try argument(0))) - 2440587.5) * 86400000) AS INTEGER)"
        case "STR_TO_UTC":
            return "strftime('%Y-%m-%dT%H:%M:%fZ', \(try argument(0)))"
        case "MATCH":
            guard arguments.count == 2, let (source, name) = fullTextIndex(arguments[0]) else {
                throw CouchetteError(.badInput, message: "MATCH() takes a full-text index name and the search terms")
            }
            let table = try fullTextTable(source, name)
            return "(\(source.sqlAlias).sequence IN (SELECT rowid FROM \(table) WHERE \(table) MATCH \(try value(arguments[1]))))"
        case "RANK":
            guard arguments.count == 1, let (source, name) = fullTextIndex(arguments[0]) else {
                throw CouchetteError(.badInput, message: "RANK() takes a full-text index name")
            }
            let table = try fullTextTable(source, name)
            guard let terms = matchTerms["\(source.sqlAlias)/\(name)"] else {
                throw CouchetteError(.badInput, message: "RANK(\(name)) needs MATCH(\(name), …) in the WHERE clause")
            }
            // bm25() is lower for better matches; RANK is higher.
            return "(SELECT -bm25(\(table)) FROM \(table) WHERE \(table) MATCH \(try value(terms)) AND rowid = \(source.sqlAlias).sequence)"
        case "REGEXP_CONTAINS", "REGEXP_LIKE", "REGEXP_POSITION":
            return "\(name.lowercased())(\(try argument(0)), \(try argument(1)))"
        case "REGEXP_REPLACE":
            let limit = arguments.count > 3 ? try argument(3) : "-1"
            return "regexp_replace(\(try argument(0)), \(try argument(1)), \(try argument(2)), \(limit))"
        case "IFMISSING", "IFNULL", "IFMISSINGORNULL":
            return "coalesce(\(try arguments.map { try value($0) }.joined(separator: ", ")))"
        default:
            throw CouchetteError(.badInput, message: "Unknown function \(name)()")
        }
    }

    /// Whether a pattern is a valid regular expression, as far as can be told before running (a literal).
    private static func isValidPattern(_ pattern: QueryExpression) -> Bool {
        guard case .literal(.string(let text)) = pattern else { return true }
        return (try? NSRegularExpression(pattern: text)) != nil
    }

    /// The source and index name a `MATCH`/`RANK` argument names: `index` (the main source's) or `alias.index`.
    private func fullTextIndex(_ argument: QueryExpression) -> (Source, String)? {
        guard case .path(let steps) = argument else { return nil }
        if steps.count == 1, case .key(let name) = steps[0] { return (sources[0], name) }
        if steps.count == 2, case .key(let alias) = steps[0], case .key(let name) = steps[1] {
            return sources.first { $0.name == alias }.map { ($0, name) }
        }
        return nil
    }

    private func fullTextTable(_ source: Source, _ name: String) throws -> String {
        guard let table = try source.collection.fullTextTable(named: name) else {
            throw CouchetteError(
                .badInput, message: "No full-text index named \(name) in collection \(source.collection.fullName)")
        }
        return table
    }

    // MARK: - Literals

    static func sqlLiteral(_ value: JSONValue) -> String {
        switch value {
        case .null: "NULL"
        case .bool(let flag): flag ? "1" : "0"
        case .int(let number): "\(number)"
        case .double(let number): number.isFinite ? "\(number)" : "NULL"
        case .string(let text): sqlString(text)
        case .array, .object: sqlString(value.serializedString())
        }
    }

    static func sqlString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// A JSON path (`'$."owner"."id"[0]'`) as an SQL string.
    static func jsonPath(_ steps: [QueryExpression.PathStep]) throws -> String {
        var path = "$"
        for step in steps {
            switch step {
            case .key(let key):
                guard !key.contains("\"") else {
                    throw CouchetteError(.badInput, message: "A property name cannot contain a double quote")
                }
                path += ".\"\(key)\""
            case .index(let index):
                path += index >= 0 ? "[\(index)]" : "[#\(index)]"
            }
        }
        return sqlString(path)
    }
}
