import CSQLite
import Foundation

// MARK: - Binding by index

extension Statement {
    /// Binds `NULL`.
    ///
    /// - Parameters:
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) for an invalid index, or when the connection is
    ///   closed.
    public func bindNull(at index: Int) throws {
        try bind(at: index) { sqlite3_bind_null($0, $1) }
    }

    /// Binds an integer.
    ///
    /// - Parameters:
    ///   - value: The integer.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, or when the connection is closed.
    public func bind(_ value: Int64, at index: Int) throws {
        try bind(at: index) { sqlite3_bind_int64($0, $1, value) }
    }

    /// Binds an integer.
    ///
    /// - Parameters:
    ///   - value: The integer.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, or when the connection is closed.
    public func bind(_ value: Int, at index: Int) throws {
        try bind(Int64(value), at: index)
    }

    /// Binds a Boolean as the integer 1 or 0.
    ///
    /// - Parameters:
    ///   - value: The Boolean.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, or when the connection is closed.
    public func bind(_ value: Bool, at index: Int) throws {
        try bind(Int64(value ? 1 : 0), at: index)
    }

    /// Binds a floating point number.
    ///
    /// - Parameters:
    ///   - value: The number.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, or when the connection is closed.
    public func bind(_ value: Double, at index: Int) throws {
        try bind(at: index) { sqlite3_bind_double($0, $1, value) }
    }

    /// Binds text, copied by SQLite (`SQLITE_TRANSIENT`); embedded NUL characters are kept.
    ///
    /// - Parameters:
    ///   - value: The text.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, text over SQLite's size limit
    ///   (`SQLITE_TOOBIG`), or when the connection is closed.
    public func bind(_ value: String, at index: Int) throws {
        var value = value
        try value.withUTF8 { bytes in
            try bind(at: index) { statement, position in
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(
                            statement, position, $0, sqlite3_uint64(bytes.count), couchette_sqlite_transient(),
                            UInt8(SQLITE_UTF8))
                    }
                } else {
                    // A NULL pointer would bind NULL: give SQLite a valid pointer for "".
                    sqlite3_bind_text64(statement, position, "", 0, couchette_sqlite_transient(), UInt8(SQLITE_UTF8))
                }
            }
        }
    }

    /// Binds a blob, copied by SQLite (`SQLITE_TRANSIENT`); an empty array binds an empty blob,
    /// not `NULL`.
    ///
    /// - Parameters:
    ///   - value: The bytes.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, a blob over SQLite's size limit, or when the
    ///   connection is closed.
    public func bind(_ value: [UInt8], at index: Int) throws {
        try value.withUnsafeBytes { try bindBlob($0, at: index) }
    }

    /// Binds a blob from `Data` without an intermediate copy; empty data binds an empty blob.
    ///
    /// - Parameters:
    ///   - value: The bytes.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, a blob over SQLite's size limit, or when the
    ///   connection is closed.
    public func bind(_ value: Data, at index: Int) throws {
        try value.withUnsafeBytes { try bindBlob($0, at: index) }
    }

    /// Binds a ``SQLiteValue``.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, an oversized value, or when the connection
    ///   is closed.
    public func bind(_ value: SQLiteValue, at index: Int) throws {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let value): try bind(value, at: index)
        case .real(let value): try bind(value, at: index)
        case .text(let value): try bind(value, at: index)
        case .blob(let value): try bind(value, at: index)
        }
    }

    /// Binds any bindable value; `nil` binds `NULL`.
    ///
    /// - Parameters:
    ///   - value: The value, or `nil`.
    ///   - index: The 1-based parameter index.
    /// - Throws: ``SQLiteError`` for an invalid index, an oversized value, or when the connection
    ///   is closed.
    public func bind(_ value: (any SQLiteBindable)?, at index: Int) throws {
        try bind(value?.sqliteValue ?? .null, at: index)
    }

    // MARK: - Binding by name

    /// Binds any bindable value to a named parameter; `nil` binds `NULL`.
    ///
    /// - Parameters:
    ///   - value: The value, or `nil`.
    ///   - name: The parameter name with its prefix (`:id`, `@id`, `$id`), or without one, in
    ///     which case `:` is assumed.
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) when the statement has no such parameter, or
    ///   when the connection is closed.
    public func bind(_ value: (any SQLiteBindable)?, named name: String) throws {
        try bind(value?.sqliteValue ?? .null, at: parameterIndex(named: name))
    }

    /// The 1-based index of a named parameter.
    ///
    /// - Parameters:
    ///   - name: The parameter name, with or without its `:`, `@` or `$` prefix.
    /// - Returns: The index.
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) when the statement has no such parameter.
    public func parameterIndex(named name: String) throws -> Int {
        let fullName = name.first.map { ":@$".contains($0) } == true ? name : ":" + name
        let index = sqlite3_bind_parameter_index(handle, fullName)
        guard index > 0 else {
            throw SQLiteError(.range, message: "no parameter named \(fullName)", sql: sql)
        }
        return Int(index)
    }

    // MARK: - Binding lists

    /// Binds `arguments` to parameters 1, 2, 3…
    ///
    /// - Parameters:
    ///   - arguments: One value per parameter; `nil` binds `NULL`.
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) when the number of arguments differs from
    ///   ``parameterCount``, or another binding error.
    public func bind(arguments: [(any SQLiteBindable)?]) throws {
        guard arguments.count == parameterCount else {
            throw SQLiteError(
                .range, message: "expected \(parameterCount) arguments, got \(arguments.count)", sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            try bind(argument, at: offset + 1)
        }
    }

    /// Clears the bindings, then binds each value to its named parameter.
    ///
    /// - Parameters:
    ///   - arguments: Values by parameter name (see ``bind(_:named:)``); parameters left out are
    ///     `NULL`.
    /// - Throws: ``SQLiteError`` (`SQLITE_RANGE`) when a name is not a parameter of the statement.
    public func bind(named arguments: [String: (any SQLiteBindable)?]) throws {
        clearBindings()
        for (name, argument) in arguments {
            try bind(argument, named: name)
        }
    }

    // MARK: - Private

    /// The single path of every `sqlite3_bind_*` call, through the result code check.
    @inline(__always)
    private func bind(at index: Int, _ call: (OpaquePointer?, Int32) -> Int32) throws {
        try database.withOpenHandle(sql: sql) { db in
            guard let handle else { throw SQLiteError.connectionClosed(sql: sql) }
            guard let position = Int32(exactly: index) else {
                throw SQLiteError(.range, message: "parameter index out of range", sql: sql)
            }
            try SQLiteError.check(call(handle, position), database: db, sql: sql)
        }
    }

    private func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int) throws {
        try bind(at: index) { statement, position in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                sqlite3_bind_blob64(statement, position, base, sqlite3_uint64(bytes.count), couchette_sqlite_transient())
            } else {
                // A NULL pointer would bind NULL: an empty blob is a zero-length zeroblob.
                sqlite3_bind_zeroblob(statement, position, 0)
            }
        }
    }
}
