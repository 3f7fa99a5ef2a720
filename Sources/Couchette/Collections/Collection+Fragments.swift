extension Collection {
    /// The document with this ID as a fragment, for chained reads: `lists["l1"]["owner"]["name"].string`.
    ///
    /// `exists` is false when the document is missing or deleted, or when it cannot be read (the database
    /// is closed or the collection deleted); use ``document(id:)`` to see such errors.
    public subscript(key: String) -> DocumentFragment {
        DocumentFragment(document: try? document(id: key))
    }
}
