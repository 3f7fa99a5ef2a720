/// An index made by ``IndexBuilder``, for ``Collection/createIndex(_:name:)``.
public protocol Index: Sendable {
    /// The same index as a configuration of SQL++ expressions.
    var configuration: any IndexConfiguration { get }
}

/// Makes indexes from builder expressions (Couchbase Lite 3's `IndexBuilder`).
///
/// ```swift
/// try tasks.createIndex(IndexBuilder.valueIndex(items: ValueIndexItem.property("taskList.id")), name: "byList")
/// try tasks.createIndex(IndexBuilder.fullTextIndex(items: FullTextIndexItem.property("task")).language("en"), name: "taskFTS")
/// ```
public enum IndexBuilder {
    /// A value index over the items, in order.
    public static func valueIndex(items: ValueIndexItem...) -> ValueIndex { ValueIndex(items: items) }

    /// A value index over the items, in order.
    public static func valueIndex(items: [ValueIndexItem]) -> ValueIndex { ValueIndex(items: items) }

    /// A full-text index over the items.
    public static func fullTextIndex(items: FullTextIndexItem...) -> FullTextIndex { FullTextIndex(items: items) }

    /// A full-text index over the items.
    public static func fullTextIndex(items: [FullTextIndexItem]) -> FullTextIndex { FullTextIndex(items: items) }
}

/// An expression of a ``ValueIndex``.
public struct ValueIndexItem: Sendable {
    let expression: any ExpressionProtocol

    /// A property of the documents (`"taskList.id"`).
    public static func property(_ property: String) -> ValueIndexItem { ValueIndexItem(expression: Expression.property(property)) }

    /// Any expression without parameters.
    public static func expression(_ expression: any ExpressionProtocol) -> ValueIndexItem { ValueIndexItem(expression: expression) }
}

/// An expression of a ``FullTextIndex``.
public struct FullTextIndexItem: Sendable {
    let expression: any ExpressionProtocol

    /// A string property of the documents.
    public static func property(_ property: String) -> FullTextIndexItem {
        FullTextIndexItem(expression: Expression.property(property))
    }
}

/// A value index made by ``IndexBuilder/valueIndex(items:)``; the same as a ``ValueIndexConfiguration``.
public struct ValueIndex: Index {
    let items: [ValueIndexItem]

    public var configuration: any IndexConfiguration {
        ValueIndexConfiguration(items.map(\.expression.node.text))
    }
}

/// A full-text index made by ``IndexBuilder/fullTextIndex(items:)``; the same as a ``FullTextIndexConfiguration``.
public struct FullTextIndex: Index {
    let items: [FullTextIndexItem]
    private var accentsIgnored = false
    private var textLanguage: String?

    init(items: [FullTextIndexItem]) {
        self.items = items
    }

    /// Whether accents are ignored (`"café"` matches `"cafe"`).
    public func ignoreAccents(_ ignoreAccents: Bool) -> FullTextIndex {
        var index = self
        index.accentsIgnored = ignoreAccents
        return index
    }

    /// The language of the text: `"en"` stems English words.
    public func language(_ language: String?) -> FullTextIndex {
        var index = self
        index.textLanguage = language
        return index
    }

    public var configuration: any IndexConfiguration {
        FullTextIndexConfiguration(
            items.map(\.expression.node.text), ignoreAccents: accentsIgnored, language: textLanguage)
    }
}
