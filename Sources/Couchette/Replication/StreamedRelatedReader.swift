import AsyncHTTPClient
import CouchetteCore
import Foundation
import MultipartKit
import NIOCore

// MARK: - TemporaryFiles

/// A folder of files that lives as long as the revision holding it: pulled attachment parts wait there until they
/// are installed in the blob store.
final class TemporaryFiles: Sendable {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("couchette-pull-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CouchetteError(.io, message: "Cannot create \(folder.path): \(error.localizedDescription)")
        }
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

// MARK: - StreamedRelatedReader

/// Reads a `multipart/related` revision as it arrives: the JSON part in memory, every other part written to a
/// temporary file chunk by chunk, so a large attachment is never whole in memory.
enum StreamedRelatedReader {
    /// The revision in `body` (of `contentType`); its attachments' content stays in `files` until stored.
    static func revision(
        from body: HTTPClientResponse.Body, contentType: String, files: TemporaryFiles
    ) async throws -> ReplicatedRevision? {
        guard let boundary = HeaderValue(parsing: contentType).parameters["boundary"], !boundary.isEmpty else {
            throw CouchetteError(.badInput, message: "A multipart answer without a boundary")
        }
        let parts = PartCollector(folder: files.folder)
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in parts.header(name, value) }
        parser.onBody = { chunk in parts.body(&chunk) }
        parser.onPartComplete = { parts.complete() }
        for try await chunk in body { try parser.execute(chunk) }
        try parts.check()
        guard let json = parts.json, case .object(let members) = try JSONValue(parsing: json) else { return nil }
        var following = (members["_attachments"]?.objectValue ?? [:])
            .filter { $0.value["follows"]?.boolValue == true }.keys.sorted()
        var bodies: [String: Blob] = [:]
        for file in parts.files {
            guard let name = file.filename.flatMap({ following.contains($0) ? $0 : nil }) ?? following.first else { break }
            let contentType = members["_attachments"]?[name]?["content_type"]?.stringValue ?? "application/octet-stream"
            bodies[name] = try Blob(contentType: contentType, fileURL: file.url)
            following.removeAll { $0 == name }
        }
        guard var revision = try ReplicatedRevision(wireBody: members, following: bodies) else { return nil }
        revision.temporaryFiles = files
        return revision
    }

    /// The parser's callbacks' state: the JSON part's bytes, then one file per part.
    private final class PartCollector {
        let folder: URL
        var json: [UInt8]?
        var files: [(filename: String?, url: URL)] = []
        private var headers: [String: String] = [:]
        private var jsonBytes: [UInt8] = []
        private var handle: FileHandle?
        private var url: URL?
        private var failure: (any Error)?

        init(folder: URL) { self.folder = folder }

        func header(_ name: String, _ value: String) { headers[name.lowercased()] = value }

        func body(_ chunk: inout ByteBuffer) {
            guard failure == nil else { return }
            guard json != nil else {
                jsonBytes += chunk.readBytes(length: chunk.readableBytes) ?? []
                return
            }
            do {
                if handle == nil {
                    let next = folder.appendingPathComponent("part-\(files.count)")
                    guard FileManager.default.createFile(atPath: next.path, contents: nil) else {
                        throw CouchetteError(.io, message: "Cannot create \(next.path)")
                    }
                    handle = try FileHandle(forWritingTo: next)
                    url = next
                }
                try handle?.write(contentsOf: chunk.readBytes(length: chunk.readableBytes) ?? [])
            } catch {
                failure = error
            }
        }

        func complete() {
            if json == nil {
                json = jsonBytes
            } else {
                if handle == nil, failure == nil {  // an empty part
                    let next = folder.appendingPathComponent("part-\(files.count)")
                    FileManager.default.createFile(atPath: next.path, contents: nil)
                    url = next
                }
                try? handle?.close()
                handle = nil
                if let url {
                    let filename = headers["content-disposition"].flatMap { HeaderValue(parsing: $0).parameters["filename"] }
                    files.append((filename, url))
                }
                url = nil
            }
            headers = [:]
        }

        /// Throws the first write failure.
        func check() throws {
            if let failure { throw CouchetteError(.io, message: "Writing a pulled attachment: \(failure)") }
        }
    }
}
