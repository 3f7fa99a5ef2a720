import CouchetteCore
import NIOCore

// MARK: - ChangesFraming

/// The bytes of `_changes` responses (spec: gateway-rest-api.md §11.3, §11.4).
///
/// - normal / longpoll: `{"results":[` + entries joined by `,\n` + `],\n"last_seq":"N"}`, heartbeats `\n`
///   before the closing bracket;
/// - continuous: one entry per line, heartbeats `\n`;
/// - websocket: JSON arrays of at most ``webSocketBatchSize`` entries.
///
/// ```swift
/// var buffer = ChangesFraming.resultsOpening
/// buffer.writeImmutableBuffer(ChangesFraming.results(rows, continuing: false))
/// buffer.writeImmutableBuffer(ChangesFraming.resultsClosing(lastSequence: 4))
/// // {"results":[{…},\n{…}],\n"last_seq":"4"}
/// ```
enum ChangesFraming {
    /// `Content-Type` of normal and longpoll responses.
    static let jsonContentType = "application/json"

    /// `Content-Type` of continuous responses.
    static let continuousContentType = "application/octet-stream"

    /// `Cache-Control` of every `_changes` response.
    static let cacheControl = "private, max-age=0, no-cache, no-store"

    /// The most entries in one WebSocket message.
    static let webSocketBatchSize = 20

    /// A heartbeat: one newline.
    static let heartbeat = ByteBuffer(string: "\n")

    // MARK: - normal / longpoll

    /// The start of a JSON response.
    static let resultsOpening = ByteBuffer(string: #"{"results":["#)

    /// Entries inside `results`, each preceded by `,\n` when `continuing` (entries were written before).
    static func results(_ rows: [ChangesRow], continuing: Bool) -> ByteBuffer {
        var buffer = ByteBuffer()
        for (index, row) in rows.enumerated() {
            if continuing || index > 0 { buffer.writeString(",\n") }
            buffer.writeBytes(row.json.serialized())
        }
        return buffer
    }

    /// The end of a JSON response: `],\n"last_seq":"N"}` (`"N:S"` after a backfilled entry).
    static func resultsClosing(lastSequence: ChangeSequence) -> ByteBuffer {
        ByteBuffer(string: "],\n\"last_seq\":\"\(lastSequence)\"}")
    }

    /// `seq_interval` (CouchDB): only every Nth entry of a response, and its last, keeps its `seq`; the others get
    /// `"seq": null`. Applied batch by batch, counting across them.
    struct SequenceThinning {
        /// N; nil keeps every `seq`.
        let interval: Int?
        /// Entries seen in earlier batches.
        private var count = 0

        init(interval: Int?) {
            self.interval = interval
        }

        /// The batch with the `seq`s it does not keep set to null; `final` when its last entry ends the response.
        mutating func apply(_ rows: [ChangesRow], final: Bool) -> [ChangesRow] {
            guard let interval, interval > 1 else { return rows }
            var thinned = rows
            for index in thinned.indices {
                count += 1
                let keeps = count % interval == 0 || (final && index == thinned.count - 1)
                if !keeps, case .object(var members) = thinned[index].json {
                    members["seq"] = .null
                    thinned[index].json = .object(members)
                }
            }
            return thinned
        }
    }

    // MARK: - continuous

    /// Entries one per line.
    static func lines(_ rows: [ChangesRow]) -> ByteBuffer {
        var buffer = ByteBuffer()
        for row in rows {
            buffer.writeBytes(row.json.serialized())
            buffer.writeString("\n")
        }
        return buffer
    }

    // MARK: - websocket

    /// Entries as WebSocket messages: JSON arrays of at most ``webSocketBatchSize`` entries.
    static func webSocketMessages(_ rows: [ChangesRow]) -> [[UInt8]] {
        stride(from: 0, to: rows.count, by: webSocketBatchSize).map { start in
            let batch = rows[start..<min(start + webSocketBatchSize, rows.count)]
            return JSONValue.array(batch.map(\.json)).serialized()
        }
    }
}
