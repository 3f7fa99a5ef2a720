import CouchetteCore

/// An expression of a SQL++ query, as parsed (or built by ``QueryBuilder``): names are resolved when the query is
/// compiled, where the data sources and `ANY`/`EVERY` variables are known.
indirect enum QueryExpression: Sendable, Equatable {
    /// A step of a property path: a member name or an array index.
    enum PathStep: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    /// `IS [NOT] NULL | MISSING | VALUED`.
    enum Check: String, Sendable, Equatable {
        case null = "NULL"
        case missing = "MISSING"
        case valued = "VALUED"
    }

    /// `ANY`, `EVERY` or `ANY AND EVERY`.
    enum Quantifier: String, Sendable, Equatable {
        case any = "ANY"
        case every = "EVERY"
        case anyAndEvery = "ANY AND EVERY"
    }

    /// A JSON literal: null, a Boolean, a number or a string.
    case literal(JSONValue)
    /// `MISSING`.
    case missing
    /// `[a, b]`.
    case array([QueryExpression])
    /// `{"name": a}`.
    case object([ObjectMember])
    /// A property path (`name`, `t.owner.id`, `tags[0]`); the first step may name a data source or a variable.
    case path([PathStep])
    /// `META()` or `META(alias)` with a field: `id`, `sequence`, `deleted`, `expiration`, `revisionID`.
    case meta(alias: String?, field: String)
    /// `$name`.
    case parameter(String)
    /// `*` or `alias.*` in a select list, `COUNT(*)`.
    case star(alias: String?)
    /// `NOT x`, `-x`.
    case unary(String, QueryExpression)
    /// Arithmetic, comparison, `AND`, `OR`, `||`, `LIKE`, `NOT LIKE`, `IN`, `NOT IN`.
    case binary(String, QueryExpression, QueryExpression)
    /// `x [NOT] BETWEEN low AND high`.
    case between(QueryExpression, low: QueryExpression, high: QueryExpression, negated: Bool)
    /// `x IS [NOT] NULL|MISSING|VALUED`.
    case check(QueryExpression, Check, negated: Bool)
    /// A function call; `distinct` for `COUNT(DISTINCT x)`.
    case function(String, [QueryExpression], distinct: Bool)
    /// `ANY v IN list SATISFIES condition END` and its kin.
    case quantified(Quantifier, variable: String, list: QueryExpression, condition: QueryExpression)
    /// `CASE [x] WHEN … THEN … [ELSE …] END`.
    case caseWhen(subject: QueryExpression?, branches: [CaseBranch], otherwise: QueryExpression?)
    /// `x COLLATE (UNICODE NOCASE NODIAC)`: string comparisons in `x`, and `x` itself in `ORDER BY`, use the
    /// collation.
    case collate(QueryExpression, Collation)
    /// Something a ``QueryBuilder`` query was given that is not an expression (a blob as a literal, a foreign
    /// conformance of ``ExpressionProtocol``): compiling the query reports the reason.
    case invalid(String)

    /// How `COLLATE` compares strings: by code point (ASCII) or by the Unicode collation, optionally ignoring case
    /// and accents.
    struct Collation: Sendable, Equatable {
        var unicode = false
        var ignoreCase = false
        var ignoreAccents = false

        /// The SQLite collation.
        var sqlName: String {
            guard unicode else { return ignoreCase ? "NOCASE" : "BINARY" }
            return SQLFunctions.unicodeCollationName(ignoringCase: ignoreCase, ignoringAccents: ignoreAccents)
        }

        /// The SQL++ words.
        var text: String {
            [unicode ? "UNICODE" : nil, ignoreCase ? "NOCASE" : nil, ignoreAccents && unicode ? "NODIAC" : nil]
                .compactMap { $0 }.joined(separator: " ")
        }
    }

    struct ObjectMember: Sendable, Equatable {
        var name: String
        var value: QueryExpression
    }

    struct CaseBranch: Sendable, Equatable {
        var when: QueryExpression
        var then: QueryExpression
    }
}

extension QueryExpression {
    /// Whether this expression or one inside it passes `test`.
    func contains(where test: (QueryExpression) -> Bool) -> Bool {
        if test(self) { return true }
        switch self {
        case .literal, .missing, .path, .meta, .parameter, .star, .invalid: return false
        case .array(let elements): return elements.contains { $0.contains(where: test) }
        case .object(let members): return members.contains { $0.value.contains(where: test) }
        case .unary(_, let operand): return operand.contains(where: test)
        case .binary(_, let left, let right): return left.contains(where: test) || right.contains(where: test)
        case .between(let subject, let low, let high, _): return [subject, low, high].contains { $0.contains(where: test) }
        case .check(let subject, _, _), .collate(let subject, _): return subject.contains(where: test)
        case .function(_, let arguments, _): return arguments.contains { $0.contains(where: test) }
        case .quantified(_, _, let list, let condition): return list.contains(where: test) || condition.contains(where: test)
        case .caseWhen(let subject, let branches, let otherwise):
            return [subject, otherwise].compactMap { $0 }.contains { $0.contains(where: test) }
                || branches.contains { $0.when.contains(where: test) || $0.then.contains(where: test) }
        }
    }
}

/// A parsed `SELECT` statement.
struct SelectStatement: Sendable, Equatable {
    struct ResultColumn: Sendable, Equatable {
        var expression: QueryExpression
        var alias: String?
    }

    /// A collection read by the query: `scope.collection`, `collection`, `_` or the database's name, with an alias.
    struct Source: Sendable, Equatable {
        var scope: String?
        var collection: String
        var alias: String?
        /// Why a ``QueryBuilder`` data source is not one (a foreign conformance): compiling reports it.
        var invalid: String?
    }

    struct Join: Sendable, Equatable {
        var source: Source
        var leftOuter: Bool
        var on: QueryExpression?
    }

    struct Ordering: Sendable, Equatable {
        var expression: QueryExpression
        var descending: Bool
    }

    var distinct = false
    var columns: [ResultColumn] = []
    var from: Source?
    var joins: [Join] = []
    var whereClause: QueryExpression?
    var groupBy: [QueryExpression] = []
    var having: QueryExpression?
    var orderBy: [Ordering] = []
    var limit: QueryExpression?
    var offset: QueryExpression?
}
