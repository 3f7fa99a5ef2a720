/// The metadata of documents (`META()`), for ``QueryBuilder`` queries:
/// `SelectResult.expression(Meta.id)`, `Meta.sequence.from("t")`.
public enum Meta {
    /// The document ID.
    public static let id: any MetaExpressionProtocol = MetaExpression(field: "id")
    /// The sequence of the document's last change.
    public static let sequence: any MetaExpressionProtocol = MetaExpression(field: "sequence")
    /// Whether the document is deleted; a query that reads it also sees deleted documents.
    public static let isDeleted: any MetaExpressionProtocol = MetaExpression(field: "deleted")
    /// When the document expires, in milliseconds since 1970, or null.
    public static let expiration: any MetaExpressionProtocol = MetaExpression(field: "expiration")
    /// The current revision's ID.
    public static let revisionID: any MetaExpressionProtocol = MetaExpression(field: "revisionID")
}
