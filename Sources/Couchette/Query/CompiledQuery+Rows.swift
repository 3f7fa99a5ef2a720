import CouchetteCore
import CouchetteSQLite

/// Reading a compiled query's result columns from the current row of its statement, without copying text that
/// becomes no value.
extension CompiledQuery {
    /// The values of the row's result columns; nil where a value is missing.
    func values(of row: Statement) -> [JSONValue?] {
        var values: [JSONValue?] = []
        values.reserveCapacity(columns.count)
        for column in columns {
            let index = column.sqlIndex
            switch column.kind {
            case .json: values.append(Self.json(row, at: index))
            case .value: values.append(Self.plain(row, at: index))
            case .boolean: values.append(row.isNull(at: index) ? .null : .bool(row.int64(at: index) != 0))
            case .extracted: values.append(Self.extracted(row, at: index))
            case .scanned(let path): values.append(row.withBytes(at: index) { JSONPathScanner.value(in: $0, at: path) })
            }
        }
        return values
    }

    /// JSON text, or nil (missing) for NULL.
    private static func json(_ row: Statement, at index: Int) -> JSONValue? {
        guard !row.isNull(at: index) else { return nil }
        return row.withBytes(at: index) { try? JSONValue(parsing: $0) }
    }

    /// A plain SQL value; NULL is null.
    private static func plain(_ row: Statement, at index: Int) -> JSONValue {
        switch row.storageClass(at: index) {
        case .null: .null
        case .integer: .int(row.int64(at: index))
        case .real: .double(row.double(at: index))
        case .text, .blob: .string(row.string(at: index))
        }
    }

    /// A `json_extract` value at `index` with its `json_type` (or NULL where the value says it) at `index + 1`.
    private static func extracted(_ row: Statement, at index: Int) -> JSONValue? {
        guard row.storageClass(at: index + 1) != .null else {
            return row.isNull(at: index) ? nil : plain(row, at: index)
        }
        // null, true, false, integer, real, text, array, object: the first two letters tell them apart.
        let (first, second) = row.withBytes(at: index + 1) { bytes in
            (bytes.first ?? 0, bytes.count > 1 ? bytes[1] : 0)
        }
        switch (first, second) {
        case (UInt8(ascii: "n"), _): return .null
        case (UInt8(ascii: "t"), UInt8(ascii: "r")): return .bool(true)
        case (UInt8(ascii: "f"), _): return .bool(false)
        case (UInt8(ascii: "i"), _): return .int(row.int64(at: index))
        case (UInt8(ascii: "r"), _): return .double(row.double(at: index))
        case (UInt8(ascii: "t"), _): return .string(row.string(at: index))
        default: return json(row, at: index)
        }
    }
}
