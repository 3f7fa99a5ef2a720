import CouchetteCore
import Foundation

/// Brings one view's index up to date in one write transaction: the documents changed since the index's last
/// sequence lose their rows and, unless deleted, are mapped again.
struct ViewIndexer {
    let view: MapReduceView
    let map: MapBlock
    let version: String
    let documentType: String?

    /// Documents read from the collection at a time, so a large first build does not hold them all in memory.
    static let batchSize = 2_000

    func run() throws {
        let collection = view.collection
        try collection.modify { edit in
            let storage = edit.storage
            var state = try storage.prepareView(collectionID: collection.id, name: view.name, version: version)
            let target = try collection.database.requireRow(collection).lastSequence
            guard state.lastSequence < target else { return }
            let firstBuild = state.lastSequence == 0
            while true {
                let batch = try storage.documents(
                    collectionID: collection.id, since: state.lastSequence, limit: Self.batchSize, withLeaves: false)
                for (record, _) in batch {
                    if !firstBuild { try storage.removeViewRows(viewID: state.id, documentID: record.documentID) }
                    if !record.isDeleted { try index(record, viewID: state.id, storage: storage) }
                    state.lastSequence = record.sequence
                }
                if batch.count < Self.batchSize { break }
            }
            try storage.setViewLastSequence(max(state.lastSequence, target), viewID: state.id)
        }
    }

    /// Maps one document and stores what it emits. Keys or values that are not JSON are skipped (and logged).
    private func index(_ record: DocumentRecord, viewID: Int64, storage: DatabaseStorage) throws {
        guard case .object(var members) = try JSONValue(parsing: record.body) else { return }
        if let documentType, members["type"]?.stringValue != documentType { return }
        members["_id"] = .string(record.documentID)
        members["_rev"] = .string(record.revisionID)
        let document = members.mapValues(DocumentValues.value(from:))
        var emitted: [(key: Any, value: Any?)] = []
        map(document) { key, value in emitted.append((key, value)) }
        for (key, value) in emitted {
            let keyJSON: JSONValue
            let valueJSON: JSONValue?
            do {
                keyJSON = try DocumentValues.json(from: key, path: "key") { _ in }
                valueJSON = try value.map { try DocumentValues.json(from: $0, path: "value") { _ in } }
            } catch {
                Log.shared.emit(
                    .warning, .query, "View \(view.name) skipped a row of \(record.documentID): \(error)")
                continue
            }
            try storage.insertViewRow(
                viewID: viewID, sortKey: JSONCollation.sortKey(keyJSON), documentID: record.documentID,
                sequence: record.sequence, key: keyJSON.serialized(), value: valueJSON?.serialized())
        }
    }
}
