import Foundation

/// Ready-made reduce functions (CouchDB's `_count`, `_sum` and `_stats`).
///
/// ```swift
/// view.setMapBlock({ doc, emit in emit(doc["taskList"], 1) }, reduce: BuiltInReduce.count, version: "1")
/// ```
public enum BuiltInReduce {
    /// The number of rows.
    public static let count: ReduceBlock = { _, values, _ in values.count }

    /// The sum of the numeric values (others count as 0).
    public static let sum: ReduceBlock = { _, values, _ in MapReduceView.totalValues(values) }

    /// `["sum", "count", "min", "max", "sumsqr"]` of the numeric values, as a dictionary.
    public static let stats: ReduceBlock = { _, values, _ in
        let numbers = values.compactMap(MapReduceView.number)
        return [
            "sum": numbers.reduce(0, +), "count": numbers.count, "min": numbers.min() ?? 0, "max": numbers.max() ?? 0,
            "sumsqr": numbers.reduce(0) { $0 + $1 * $1 },
        ] as [String: Any]
    }
}
