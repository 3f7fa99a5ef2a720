import Couchette
import Foundation

/// "Resolve Conflicts" (seed 002): conflicts are found by a live all-documents query in `onlyConflicts` mode and
/// resolved as the tutorial does: for `task-list` and `task-list.user` documents the default winner's properties
/// are kept; for `task` documents the conflicting revisions are merged property by property (an n-way merge against
/// their common ancestor). Either way the winner gets a new revision with the result and every other branch is
/// deleted, in one transaction.
enum TodoConflicts {
    /// Resolves every conflict in `rows` (of ``TodoStore/conflictsQuery()``); returns how many documents it resolved.
    @discardableResult
    static func resolve(_ rows: QueryEnumerator, in database: Database) -> Int {
        var resolved = 0
        for row in rows {
            guard let revisions = row.conflictingRevisions, revisions.count > 1 else { continue }
            let winner = revisions[0]
            let type = (winner["type"] as? String) ?? ""
            let merged: (properties: [String: Any], image: Blob?)
            switch type {
            case "task-list", "task-list.user":
                merged = (winner.userProperties ?? [:], winner.attachment(named: "image"))
            case "task":
                merged = nWayMerge(revisions)
            default:
                continue
            }
            if (try? resolve(revisions, keeping: merged.properties, image: merged.image, in: database)) == true {
                resolved += 1
            }
        }
        return resolved
    }

    /// The tutorial's `resolveConflicts`: a child of the winning revision with `properties` (and `image`), a
    /// deletion of every other leaf.
    private static func resolve(
        _ revisions: [SavedRevision], keeping properties: [String: Any], image: Blob?, in database: Database
    ) throws -> Bool {
        try database.inTransaction {
            for (index, revision) in revisions.enumerated() {
                let child = revision.createRevision()
                if index == 0 {
                    child.userProperties = properties
                    if revision.attachment(named: "image")?.digest != image?.digest {
                        if let content = image?.content {
                            child.setAttachment(named: "image", contentType: image?.contentType ?? "image/jpeg", content: content)
                        } else {
                            child.removeAttachment(named: "image")
                        }
                    }
                } else {
                    child.properties = [:]
                    child.isDeletion = true
                }
                _ = try child.saveAllowingConflict()
            }
            return true
        }
    }

    /// The tutorial's `nWayMergeConflicts`: starting from the revisions' common ancestor, each property (and the
    /// image) takes the value of the revision that changed it; when several did, the default winner's change wins.
    static func nWayMerge(_ revisions: [SavedRevision]) -> (properties: [String: Any], image: Blob?) {
        let winner = revisions[0]
        guard let ancestor = commonAncestor(revisions) else {
            return (winner.userProperties ?? [:], winner.attachment(named: "image"))
        }
        let base = ancestor.userProperties ?? [:]
        var merged = base
        var image = ancestor.attachment(named: "image")
        // Later revisions first, so that the winner's changes are applied last and win.
        for revision in revisions.reversed() {
            let properties = revision.userProperties ?? [:]
            for key in Set(base.keys).union(properties.keys) where !same(properties[key], base[key]) {
                merged[key] = properties[key]
            }
            let revisionImage = revision.attachment(named: "image")
            if revisionImage?.digest != ancestor.attachment(named: "image")?.digest { image = revisionImage }
        }
        return (merged, image)
    }

    /// The newest revision every branch descends from.
    private static func commonAncestor(_ revisions: [SavedRevision]) -> SavedRevision? {
        // Each history runs from the root to the revision.
        let histories = revisions.map { (try? $0.history()) ?? [] }
        guard let first = histories.first else { return nil }
        let others = histories.dropFirst().map { Set($0.compactMap(\.revisionID)) }
        return first.reversed().first { candidate in
            others.allSatisfy { $0.contains(candidate.revisionID ?? "") } && candidate.propertiesAvailable
        }
    }

    private static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (a?, b?): return NSDictionary(dictionary: ["v": a]).isEqual(to: ["v": b])
        }
    }
}
