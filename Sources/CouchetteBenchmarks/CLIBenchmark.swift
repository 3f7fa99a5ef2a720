import Couchette
import Foundation

/// The `couchette` tool against the library doing the same work in this process: `cp DB FILE.jsonl` against a
/// loop over the documents writing JSON lines (`cli.export-docs-per-s`, goal ≥ 0.8), and `cp -w FILE.jsonl NEW`
/// against parsing the lines and saving them in one batch (`cli.import`, goal ≥ 0.8). The tool runs as a
/// subprocess (the release build next to this one), so its figures include starting and opening the database.
struct CLIBenchmark {
    let count: Int

    func run() throws {
        let tool = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("couchette")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            print("# cli: skipped, build it first: swift build -c release --product couchette")
            return
        }
        let directory = (NSTemporaryDirectory() as NSString).appendingPathComponent("couchette-cli-bench-\(UUID())")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("# cli: \(count) documents")
        var config = DatabaseConfiguration()
        config.directory = directory
        let source = try Database(name: "source", config: config)
        let collection = try source.defaultCollection()
        try source.inBatch {
            for index in 0..<count {
                try collection.save(
                    document: MutableDocument(
                        id: "task-\(index)",
                        data: [
                            "type": "task", "task": "Task \(index)", "complete": index % 2 == 0,
                            "taskList": ["id": "list-\(index % 100)", "owner": "user1"],
                        ]))
            }
        }

        // Export: the library's loop against the tool, alternating, best of three each.
        var library = Double.infinity
        var command = Double.infinity
        for round in 0..<3 {
            library = min(library, try Benchmark.timed { try Self.export(collection, to: "\(directory)/library-\(round).jsonl") })
            command = min(command, try Benchmark.timed { try Benchmark.runTool(tool, ["cp", "\(directory)/source.couchette", "\(directory)/tool-\(round).jsonl"]) })
        }
        try source.close()
        Benchmark.report("cli.export-docs-per-s", baselineSeconds: library, measuredSeconds: command, goal: ">=0.8")

        // Import into new databases.
        let lines = "\(directory)/library-0.jsonl"
        library = .infinity
        command = .infinity
        for round in 0..<3 {
            library = min(library, try Benchmark.timed {
                let target = try Database(name: "library-\(round)", config: config)
                try Self.import(lines, into: try target.defaultCollection())
                try target.close()
            })
            command = min(command, try Benchmark.timed { try Benchmark.runTool(tool, ["cp", "-w", lines, "\(directory)/tool-\(round).couchette"]) })
        }
        Benchmark.report("cli.import", baselineSeconds: library, measuredSeconds: command, goal: ">=0.8")
    }

    /// What `export` does, written against the library: every live document as a JSON line, in ID order.
    private static func export(_ collection: Collection, to path: String) throws {
        var text: [UInt8] = []
        let ids = try collection.changes(since: 0).filter { !$0.isDeletion }.map(\.documentID).sorted()
        for id in ids {
            guard let document = try collection.document(id: id) else { continue }
            var members = document.toJSONValue().objectValue ?? [:]
            members["_id"] = .string(id)
            text += JSONValue.object(members).serialized()
            text.append(UInt8(ascii: "\n"))
        }
        try Data(text).write(to: URL(fileURLWithPath: path))
    }

    /// What `import` does: each line parsed and saved as a document, in one batch.
    private static func `import`(_ path: String, into collection: Collection) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try collection.database.inBatch {
            for line in data.split(separator: UInt8(ascii: "\n")) {
                guard case .object(var members) = try JSONValue(parsing: Array(line)) else { continue }
                let id = members.removeValue(forKey: "_id")?.stringValue
                let document = MutableDocument(id: id)
                _ = try document.setJSON(JSONValue.object(members).serializedString())
                try collection.save(document: document)
            }
        }
    }
}
