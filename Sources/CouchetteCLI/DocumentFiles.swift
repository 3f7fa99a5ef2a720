import Couchette
import Foundation

// MARK: - DocumentFiles

/// Documents as files, for `cp`, `import` and `export`: JSON lines (one `{"_id": …, …body}` a line; `-` is standard
/// input or output) or a folder of `ID.json` files (the ID percent-encoded where it holds `/` or `%`).
enum DocumentFiles {
    enum Kind {
        case jsonLines
        case folder
    }

    /// What `path` names: JSON lines (`-`, `.json`, `.jsonl`, `.ndjson`), a folder (an existing directory that is not a
    /// database, or a path ending in `/`), or nil (a database or a URL).
    static func kind(of path: String) -> Kind? {
        if path == "-" || [".json", ".jsonl", ".ndjson"].contains(where: path.lowercased().hasSuffix) { return .jsonLines }
        if path.hasSuffix(".couchette") || path.hasSuffix(".couchette/") || ReplicationRun.isRemote(path) { return nil }
        var isDirectory: ObjCBool = false
        if path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue) {
            return .folder
        }
        return nil
    }

    // MARK: Reading

    /// Calls `each` with every document of `path`: its ID (nil when it has none) and members (`_id` and `_rev`
    /// removed), then reports progress (documents and bytes read).
    ///
    /// - Returns: How many documents were read.
    /// - Throws: ``CLIError/usage(_:)`` for a line or file that is not a JSON object.
    @discardableResult
    static func read(
        _ path: String, kind: Kind, progress: ProgressReporter? = nil,
        _ each: (_ id: String?, _ members: [String: JSONValue]) throws -> Void
    ) throws -> Int {
        switch kind {
        case .jsonLines:
            let data: Data
            if path == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let read = FileManager.default.contents(atPath: path) else { throw CLIError.notFound("Cannot read \(path)") }
                data = read
            }
            let lines = data.split(separator: UInt8(ascii: "\n")).filter { !$0.allSatisfy { $0 == 32 || $0 == 13 || $0 == 9 } }
            var bytes: UInt64 = 0
            for (number, line) in lines.enumerated() {
                guard case .object(var members)? = try? JSONValue(parsing: Array(line)) else {
                    throw CLIError.usage("Line \(number + 1) of \(path) is not a JSON object.")
                }
                let id = members.removeValue(forKey: "_id")?.stringValue
                members["_rev"] = nil
                try each(id, members)
                bytes += UInt64(line.count + 1)
                progress?.show(UInt64(number + 1), of: UInt64(lines.count), bytes: bytes)
            }
            return lines.count
        case .folder:
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .filter { $0.hasSuffix(".json") }.sorted()
            var bytes: UInt64 = 0
            for (number, name) in names.enumerated() {
                let file = (path as NSString).appendingPathComponent(name)
                guard let data = FileManager.default.contents(atPath: file),
                    case .object(var members)? = try? JSONValue(parsing: Array(data))
                else { throw CLIError.usage("\(file) is not a JSON object.") }
                let named = String(name.dropLast(5)).removingPercentEncoding
                let id = members.removeValue(forKey: "_id")?.stringValue ?? named
                members["_rev"] = nil
                try each(id, members)
                bytes += UInt64(data.count)
                progress?.show(UInt64(number + 1), of: UInt64(names.count), bytes: bytes)
            }
            return names.count
        }
    }

    // MARK: Writing

    /// Writes documents to JSON lines or a folder, buffered.
    final class Writer {
        private let kind: Kind
        private let path: String
        private let handle: FileHandle?
        private var buffer: [UInt8] = []
        /// Bytes written so far.
        private(set) var bytes: UInt64 = 0

        /// Opens `path` for writing (a JSON-lines file is replaced; a folder is created when missing).
        init(_ path: String, kind: Kind) throws {
            self.kind = kind
            self.path = path
            switch kind {
            case .jsonLines where path == "-":
                handle = FileHandle.standardOutput
            case .jsonLines:
                guard FileManager.default.createFile(atPath: path, contents: nil), let opened = FileHandle(forWritingAtPath: path)
                else { throw CLIError.failed("Cannot write \(path)") }
                handle = opened
            case .folder:
                do {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                } catch {
                    throw CLIError.failed("Cannot create the folder \(path): \(error.localizedDescription)")
                }
                handle = nil
            }
        }

        /// Writes one document: `_id` first, then its members.
        func write(id: String, members: [String: JSONValue]) throws {
            var document = members
            document["_id"] = .string(id)
            var json = JSONValue.object(document).serialized()
            switch kind {
            case .jsonLines:
                json.append(UInt8(ascii: "\n"))
                buffer += json
                if buffer.count >= 1 << 20 { try flush() }
            case .folder:
                let file = (path as NSString).appendingPathComponent(Self.fileName(for: id))
                guard FileManager.default.createFile(atPath: file, contents: Data(json)) else {
                    throw CLIError.failed("Cannot write \(file)")
                }
            }
            bytes += UInt64(json.count)
        }

        /// Writes what is buffered and closes the file.
        func close() throws {
            try flush()
            if path != "-" { try? handle?.close() }
        }

        private func flush() throws {
            guard let handle, !buffer.isEmpty else { return }
            do { try handle.write(contentsOf: buffer) } catch { throw CLIError.failed("Cannot write \(path): \(error)") }
            buffer.removeAll(keepingCapacity: true)
        }

        /// `ID.json`, the ID percent-encoded where a file name cannot hold it as it is.
        static func fileName(for id: String) -> String {
            var allowed = CharacterSet.urlPathAllowed
            allowed.remove(charactersIn: "/%")
            var name = id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
            if name.hasPrefix(".") { name = "%2E" + name.dropFirst() }
            return name + ".json"
        }
    }

    // MARK: Database side

    /// Every live document of `collection` (ID and members, each blob's content inline: ``InlineBlobs``), in ID order.
    static func forEachDocument(
        of collection: Collection, progress: ProgressReporter? = nil, bytes: () -> UInt64? = { nil },
        _ body: (String, [String: JSONValue]) throws -> Void
    ) throws -> Int {
        let ids = try collection.changes(since: 0).filter { !$0.isDeletion }.map(\.documentID).sorted()
        var count = 0
        for id in ids {
            guard let document = try collection.document(id: id) else { continue }
            try body(id, try InlineBlobs.inlined(document.toJSONValue().objectValue ?? [:], of: id, from: collection.database))
            count += 1
            progress?.show(UInt64(count), of: UInt64(ids.count), bytes: bytes())
        }
        return count
    }

    /// Saves one document into `collection` (updating the current revision), unless it exists and `keepExisting`;
    /// inline blob content is stored first (``InlineBlobs``).
    ///
    /// - Returns: Whether it was saved.
    /// - Throws: ``CLIError`` naming the document when a blob's content is neither in the file nor in the database.
    static func save(id: String?, members: [String: JSONValue], into collection: Collection, keepExisting: Bool) throws -> Bool {
        let current = try id.flatMap { try collection.document(id: $0) }
        if current != nil && keepExisting { return false }
        let document = current?.toMutable() ?? MutableDocument(id: id)
        let stored = try InlineBlobs.stored(members, of: id ?? document.id, into: collection.database)
        _ = try document.setJSON(JSONValue.object(stored).serializedString())
        try collection.save(document: document)
        return true
    }
}
