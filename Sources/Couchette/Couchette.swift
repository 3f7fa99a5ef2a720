import CouchetteCore

/// Couchette: an embedded JSON document database with revision trees, attachments, queries, encryption at
/// rest and a replicator that speaks the CouchDB replication protocol.
///
/// ```swift
/// import Couchette
///
/// let db = try Database(name: "todo")
/// let lists = try db.defaultCollection()
/// let list = MutableDocument(id: "user1.\(UUID())").setString("task-list", forKey: "type")
/// try lists.save(document: list)
/// ```
public enum Couchette {
    /// The library's version.
    public static let version = "0.1.0"
}

/// A JSON value, as ``Document/toJSONValue()`` returns it. The type of the shared `CouchetteCore` module.
public typealias JSONValue = CouchetteCore.JSONValue
