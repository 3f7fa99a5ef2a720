/// How ``ExpressionProtocol/collate(_:)`` compares strings.
public protocol CollationProtocol: Sendable {}

/// Makes collations for ``ExpressionProtocol/collate(_:)``.
///
/// ```swift
/// QueryBuilder.select(SelectResult.property("name")).from(DataSource.collection(lists))
///     .where(Expression.property("name").collate(Collation.unicode().ignoreCase(true)).equalTo(Expression.string("groceries")))
///     .orderBy(Ordering.expression(Expression.property("name").collate(Collation.unicode())))
/// ```
public enum Collation {
    /// The Unicode collation (`COLLATE UNICODE`): letters in alphabetical order whatever their case and accents,
    /// then accents, then case (lowercase first).
    public static func unicode() -> UnicodeCollation { UnicodeCollation() }

    /// Code-point order (`COLLATE BINARY`), or ASCII letters case-insensitively (`NOCASE`).
    public static func ascii() -> ASCIICollation { ASCIICollation() }

    /// Couchbase Lite's name for ``UnicodeCollation``.
    public typealias Unicode = UnicodeCollation
    /// Couchbase Lite's name for ``ASCIICollation``.
    public typealias ASCII = ASCIICollation
}

/// The library's collations, each holding the collation it stands for.
protocol BuiltCollation {
    var collation: QueryExpression.Collation { get }
}

/// The Unicode collation, optionally ignoring case or accents.
public struct UnicodeCollation: CollationProtocol, BuiltCollation {
    var collation = QueryExpression.Collation(unicode: true)

    /// Whether `"a"` equals `"A"`.
    public func ignoreCase(_ ignoreCase: Bool) -> UnicodeCollation {
        var copy = self
        copy.collation.ignoreCase = ignoreCase
        return copy
    }

    /// Whether `"e"` equals `"é"`.
    public func ignoreAccents(_ ignoreAccents: Bool) -> UnicodeCollation {
        var copy = self
        copy.collation.ignoreAccents = ignoreAccents
        return copy
    }

    /// Accepted for compatibility: the collation is Unicode's root one for every locale.
    public func locale(_ locale: String?) -> UnicodeCollation { self }
}

/// Code-point order, optionally ignoring the case of ASCII letters.
public struct ASCIICollation: CollationProtocol, BuiltCollation {
    var collation = QueryExpression.Collation(unicode: false)

    /// Whether `"a"` equals `"A"`.
    public func ignoreCase(_ ignoreCase: Bool) -> ASCIICollation {
        var copy = self
        copy.collation.ignoreCase = ignoreCase
        return copy
    }
}

extension ExpressionProtocol {
    /// The expression with string comparisons in it, and its own order in `orderBy`, following `collation`.
    public func collate(_ collation: any CollationProtocol) -> any ExpressionProtocol {
        BuiltExpression(.collate(node, (collation as? any BuiltCollation)?.collation ?? QueryExpression.Collation()))
    }

    /// Whether the whole string matches the regular expression (`REGEXP_LIKE`; ICU syntax, as `NSRegularExpression`).
    public func regex(_ expression: any ExpressionProtocol) -> any ExpressionProtocol {
        BuiltExpression(.function("REGEXP_LIKE", [node, expression.node], distinct: false))
    }
}
