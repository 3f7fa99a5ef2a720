// MARK: - SortedRows

/// The search and insertion the in-memory indexes (``MemoryChannelIndex``, ``MemoryGrantIndex``) share over rows kept
/// in order.
enum SortedRows {
    /// The first of `count` rows that is not before the one sought (`isBefore` tells, for a row's index, whether it
    /// comes before): `count` when every row does. New rows usually go last, so the last row is tried first.
    static func firstIndex(in count: Int, where isBefore: (Int) -> Bool) -> Int {
        guard count > 0, !isBefore(count - 1) else { return count }
        var low = 0
        var high = count - 1
        while low < high {
            let middle = (low + high) / 2
            if isBefore(middle) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Puts `element` at `index` of rows kept in order: an append in the usual case, a row at the newest sequence
    /// (`Array.insert(_:at:)` goes through `replaceSubrange` even at the end).
    static func insert<Element>(_ element: Element, at index: Int, into rows: inout [Element]) {
        if index == rows.count { rows.append(element) } else { rows.insert(element, at: index) }
    }
}
