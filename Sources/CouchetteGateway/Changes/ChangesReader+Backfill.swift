// MARK: - Backfill

extension ChangesReader {
    /// Reads the next entries of a backfill: the current entries of its channels with sequence after
    /// ``ChangesBackfill/after`` and up to ``ChangesBackfill/triggeredBy``, each under the position `N:S`
    /// (spec: sync-function.md §8.2).
    ///
    /// Documents that left every backfilled channel are skipped: the client never received them through those
    /// channels, and one still readable through another channel must not look removed. `active_only` applies.
    ///
    /// ```swift
    /// let batch = try await reader.readBackfill(ChangesBackfill(triggeredBy: 9, selection: .channels(["b"])), limit: nil)
    /// batch.rows.map(\.sequence.description)  // ["9:2", "9:5"]
    /// batch.position                           // 5: resume after it while not exhausted
    /// ```
    ///
    /// - Parameters:
    ///   - backfill: What to backfill, and how far it got.
    ///   - limit: The most entries to return; nil for no limit (at most about ``fetchSize`` come back per call).
    /// - Returns: The rows, with ``Batch/position`` the last sequence `S` examined; exhausted once every entry up to
    ///   the trigger was examined.
    /// - Throws: ``GatewayError`` from the storage.
    public func readBackfill(_ backfill: ChangesBackfill, limit: Int?) async throws(GatewayError) -> Batch {
        let fetchSize = limit.map { min(max($0, 1), Self.fetchSize) } ?? Self.fetchSize
        var rows: [ChangesRow] = []
        var position = backfill.after
        while position < backfill.triggeredBy {
            let entries = try await fetch(backfill.selection, after: position, limit: fetchSize)
            let page =
                readsPages
                ? try await page(
                    of: entries.filter { $0.sequence <= backfill.triggeredBy && $0.removedFrom.isEmpty && accepts($0) })
                : ChangesPage()
            for entry in entries {
                if entry.sequence > backfill.triggeredBy {
                    return Batch(rows: rows, position: position, isExhausted: true)
                }
                position = entry.sequence
                guard entry.removedFrom.isEmpty, accepts(entry) else { continue }
                let sequence = ChangeSequence(entry.sequence, triggeredBy: backfill.triggeredBy)
                rows.append(row(for: entry, sequence: sequence, page: page))
                if let limit, rows.count >= limit {
                    return Batch(rows: rows, position: position, isExhausted: false)
                }
            }
            if entries.count < fetchSize { break }
            if !rows.isEmpty { return Batch(rows: rows, position: position, isExhausted: false) }
        }
        return Batch(rows: rows, position: position, isExhausted: true)
    }
}
