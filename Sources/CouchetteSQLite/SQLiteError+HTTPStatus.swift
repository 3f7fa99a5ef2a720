// MARK: - HTTP status

extension SQLiteError {
    /// The HTTP status a server should answer when this error ends a request.
    ///
    /// This is the one mapping from SQLite failures to HTTP; it depends on the primary code only:
    ///
    /// | Primary code                         | Status | Meaning                                   |
    /// |--------------------------------------|--------|-------------------------------------------|
    /// | `SQLITE_CONSTRAINT`                  | 409    | Conflict: the row already exists, or a reference is missing |
    /// | `SQLITE_BUSY`, `SQLITE_LOCKED`       | 503    | Service Unavailable: retry later          |
    /// | `SQLITE_NOTADB`                      | 401    | Unauthorized: wrong encryption key, or not a database |
    /// | `SQLITE_READONLY`, `SQLITE_PERM`, `SQLITE_AUTH` | 403 | Forbidden: the database cannot be written |
    /// | `SQLITE_CANTOPEN`                    | 404    | Not Found: the database file cannot be opened |
    /// | `SQLITE_TOOBIG`                      | 413    | Content Too Large                         |
    /// | `SQLITE_FULL`                        | 507    | Insufficient Storage: the disk is full    |
    /// | everything else (`SQLITE_MISUSE`, a closed connection, `SQLITE_ERROR`, I/O, corruption…) | 500 | Internal Server Error |
    public var status: Int {
        switch primaryCode {
        case .constraint: 409
        case .busy, .locked: 503
        case .notADatabase: 401
        case .readOnly, .permission, .auth: 403
        case .cantOpen: 404
        case .tooBig: 413
        case .full: 507
        default: 500
        }
    }
}
