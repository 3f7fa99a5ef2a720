import CouchetteCore

// The module `Couchette`: an embedded JSON document database with revision trees, attachments, queries,
// encryption at rest and a replicator that speaks the CouchDB replication protocol.
//
// No type is named after the module, so `Couchette.Collection` and `Couchette.Document` name this module's
// types wherever `Collection` would clash with `Swift.Collection`. The library's version is `Database.version`.

/// A JSON value, as ``Document/toJSONValue()`` returns it. The type of the shared `CouchetteCore` module.
public typealias JSONValue = CouchetteCore.JSONValue
