import CouchetteCore
import Foundation

/// JSON parsing and serialization through ``JSONValue`` against Foundation's `JSONSerialization` on the same
/// Todo-style documents.
struct JSONBenchmark {
    let documents: [Data]

    init(count: Int = 2_000) {
        documents = (0..<count).map { index in
            let document: JSONValue = [
                "_id": .string("user1.\(index)-2F5FB3E4-CD95-49F7-B232-5836F5869BEA"),
                "type": index % 3 == 0 ? "task-list" : "task",
                "title": .string("Buy milk and eggs for the week — n°\(index) ✓"),
                "createdAt": "2026-11-22T00:19:14.000Z",
                "complete": .bool(index % 2 == 0),
                "priority": .int(Int64(index % 5)),
                "weight": .double(Double(index) * 0.25 + 0.1),
                "taskList": ["id": "user1.931645E7-84E0-46D1-82E0-0B39E5A70162", "owner": "user1"],
                "tags": ["groceries", "weekly", .string("tag\(index % 17)")],
                "_attachments": [
                    "image": [
                        "content_type": "image/jpeg", "digest": "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=",
                        "length": 48213, "revpos": 2, "stub": true,
                    ]
                ],
                "notes": .string(String(repeating: "Line with \"quotes\" and a tab\t. ", count: 4)),
            ]
            return Data(document.serialized())
        }
    }

    func run() throws {
        let parseBaseline = try Benchmark.fastest {
            for data in documents { _ = try JSONSerialization.jsonObject(with: data) }
        }
        let parseMeasured = try Benchmark.fastest {
            for data in documents { _ = try JSONValue(parsing: data) }
        }
        Benchmark.report(
            "core.json.parse", baselineSeconds: parseBaseline, measuredSeconds: parseMeasured, goal: ">=1.0")

        let foundationObjects = try documents.map { try JSONSerialization.jsonObject(with: $0) }
        let values = try documents.map { try JSONValue(parsing: $0) }
        let serializeBaseline = try Benchmark.fastest {
            for object in foundationObjects { _ = try JSONSerialization.data(withJSONObject: object, options: .sortedKeys) }
        }
        let serializeMeasured = Benchmark.fastest {
            for value in values { _ = value.serialized() }
        }
        Benchmark.report(
            "core.json.serialize", baselineSeconds: serializeBaseline, measuredSeconds: serializeMeasured,
            goal: ">=1.0")
    }
}
