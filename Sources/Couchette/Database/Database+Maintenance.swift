import CouchetteCore
import Foundation

/// Kinds of maintenance.
public enum MaintenanceType: UInt8, Sendable {
    /// Prune revision trees to `maxRevTreeDepth`, drop the bodies of non-leaf revisions, delete blobs no
    /// document refers to, and reclaim file space.
    case compact
    /// Rebuild the database's indexes.
    case reindex
    /// Check the file and every document and blob; throws `.corrupt` describing what is wrong.
    case integrityCheck
    /// Update the query planner's statistics cheaply.
    case optimize
    /// Update every statistic.
    case fullOptimize
}

extension Database {
    /// Performs maintenance.
    ///
    /// ```swift
    /// try db.performMaintenance(type: .compact)
    /// ```
    /// - Throws: `.corrupt` from `.integrityCheck` when problems are found; `.notOpen` when closed.
    public func performMaintenance(type: MaintenanceType) throws {
        switch type {
        case .compact: try compact()
        case .reindex: try withStorage { storage in try storage.reindex() }
        case .integrityCheck: try checkIntegrity()
        case .optimize: try withStorage { storage in try storage.optimize() }
        case .fullOptimize: try withStorage { storage in try storage.analyze() }
        }
    }

    private func compact() throws {
        var referenced: Set<String> = []
        try write { storage in
            var rewritten: [DocumentRecord] = []
            try storage.forEachDocument { record in
                var tree = record.tree!
                let before = tree
                tree.prune(toDepth: Int(config.maxRevTreeDepth))
                tree.removeAncestorBodies()
                for leaf in tree.leaves {
                    if let body = leaf.body { DocumentValues.blobDigests(in: body, into: &referenced) }
                }
                if tree != before {
                    var updated = record
                    updated.tree = tree
                    rewritten.append(updated)
                }
            }
            for record in rewritten { try storage.write(record, mode: .update) }
        }
        let keep = Set(referenced.compactMap { try? AttachmentDigest(parsing: $0) })
        if let store = currentBlobStore {
            let removed = try store.removeAll(except: keep)
            Log.shared.emit(.info, .database, "Compaction removed \(removed) unused blob(s)")
        }
        try withStorage { storage in try storage.vacuum() }
    }

    /// What is wrong with a referenced blob: missing, or (encrypted) failing its checks when read through.
    private static func blobProblem(_ digest: AttachmentDigest, in store: BlobStore) -> String? {
        guard store.contains(digest) else { return "is missing" }
        guard store.cipher != nil else { return nil }
        do {
            let reader = try store.reader(for: digest)
            while try reader.next() != nil {}
            return nil
        } catch {
            return "does not verify (\(error.message))"
        }
    }

    private func checkIntegrity() throws {
        var problems: [String] = []
        try withStorage { storage in
            let result = try storage.integrityProblems()
            if result != ["ok"] { problems.append(contentsOf: result.prefix(10).map { "SQLite: \($0)" }) }
            let store = blobStore
            var checked: [AttachmentDigest: String?] = [:]
            do {
                try storage.forEachDocument { record in
                    guard (try? JSONValue(parsing: record.body))?.objectValue != nil else {
                        problems.append("Document \(record.documentID): unreadable body")
                        return
                    }
                    if record.tree?.winner?.id.description != record.revisionID {
                        problems.append("Document \(record.documentID): current revision does not match its tree")
                    }
                    var digests: Set<String> = []
                    for leaf in record.tree?.leaves ?? [] {
                        if let body = leaf.body { DocumentValues.blobDigests(in: body, into: &digests) }
                    }
                    for digest in digests {
                        guard let parsed = try? AttachmentDigest(parsing: digest) else {
                            problems.append("Document \(record.documentID): bad blob digest")
                            continue
                        }
                        guard parsed.algorithm == .sha1, let store else { continue }
                        let problem = checked[parsed] ?? Database.blobProblem(parsed, in: store)
                        checked[parsed] = .some(problem)  // each blob is read through once
                        if let problem { problems.append("Document \(record.documentID): blob \(digest) \(problem)") }
                    }
                }
            } catch {
                problems.append("Unreadable document: \(error)")
            }
        }
        guard problems.isEmpty else {
            throw CouchetteError(.corrupt, message: "Integrity check failed: " + problems.joined(separator: "; "))
        }
    }
}
