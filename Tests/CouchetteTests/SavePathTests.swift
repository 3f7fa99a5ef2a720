import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import PropertyBased
import Testing

/// A document read and changed in top-level scalars is saved by patching its stored text and appending to its
/// stored tree, prepared before the lock and written only if the row did not change. These tests hold that
/// path to the general one: the same revisions, trees and bodies, and the same answers when the document
/// changed in between.
@Suite(.timeLimit(.minutes(5))) struct SavePathTests {
    static let names = ["done", "name", "priority", "a", "é", "zz"]

    /// One random edit, applied the same way to a document of each database.
    enum Edit {
        case set(String, Any?)
        /// A value only the general path saves (a fraction, a container): the patched path must step aside.
        case setGeneral(String, Any)

        static func random(_ generator: inout SplitMix64) -> Edit {
            let name = names.randomElement(using: &generator)!
            switch Int.random(in: 0..<8, using: &generator) {
            case 0: return .set(name, nil)
            case 1: return .set(name, Bool.random(using: &generator))
            case 2: return .set(name, Int.random(in: -3...3, using: &generator))
            case 3: return .setGeneral(name, Double(Int.random(in: 1...9, using: &generator)) / 2)
            case 4: return .setGeneral(name, ["nested": Int.random(in: 0...2, using: &generator)])
            default: return .set(name, ["x", "y", "quote\"d", ""].randomElement(using: &generator)!)
            }
        }

        func apply(to document: MutableDocument) {
            switch self {
            case .set(let name, let value): document.setValue(value, forKey: name)
            case .setGeneral(let name, let value): document.setValue(value, forKey: name)
            }
        }
    }

    /// A document's whole tree: its revisions, and the body of each that keeps one, as JSON text.
    static func tree(_ collection: Collection, _ id: String) throws -> [String] {
        let tree = try #require(try collection.revisionTree(documentID: id))
        return try tree.nodes.map { node in
            let body = try collection.revision(documentID: id, revisionID: node.revisionID)?.userProperties
            let text = try body.map { try JSONValue(foundationObject: $0).serializedString() } ?? "-"
            return "\(node.revisionID) \(node.parentRevisionID ?? "root") \(node.isDeletion) \(node.hasBody) \(text)"
        } + [tree.winningRevisionID]
    }

    @Test func patchedSavesMakeTheRevisionsTreesAndBodiesOfGeneralSaves() async throws {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var generator = SplitMix64(state: seed)
            let depth = UInt32.random(in: 1...4, using: &generator)
            let directory = TemporaryDirectory()
            let patched = try directory.open("patched") { $0.maxRevTreeDepth = depth }
            let general = try directory.open("general") { $0.maxRevTreeDepth = depth }
            defer {
                try? patched.close()
                try? general.close()
            }
            let (left, right) = (try patched.defaultCollection(), try general.defaultCollection())
            let initial: [String: Any] = ["name": "Milk", "priority": 2, "done": false]
            try left.save(document: MutableDocument(id: "doc", data: initial))
            try right.save(document: MutableDocument(id: "doc", data: initial))
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let edits = (0..<Int.random(in: 0...3, using: &generator)).map { _ in Edit.random(&generator) }
                // Read and edited in place: the patched path whenever the edits allow it.
                let fast = try #require(try left.document(id: "doc")).toMutable()
                // The same edits on a copy whose values were all replaced: always the general path.
                let slow = try #require(try right.document(id: "doc")).toMutable()
                slow.setData(slow.toDictionary())
                for edit in edits {
                    edit.apply(to: fast)
                    edit.apply(to: slow)
                }
                try left.save(document: fast)
                try right.save(document: slow)
                #expect(fast.revisionID == slow.revisionID)
                #expect(fast.toJSON() == slow.toJSON())
                #expect(try Self.tree(left, "doc") == Self.tree(right, "doc"))
                #expect(try left.document(id: "doc")?.toJSON() == right.document(id: "doc")?.toJSON())
                // Saving the returned document again, edited or not, stays in step too.
                if Bool.random(using: &generator) {
                    fast.setInt(7, forKey: "priority")
                    slow.setInt(7, forKey: "priority")
                    try left.save(document: fast)
                    try right.save(document: slow)
                    #expect(fast.revisionID == slow.revisionID)
                    #expect(try Self.tree(left, "doc") == Self.tree(right, "doc"))
                }
            }
        }
    }

    @Test func newDocumentsOfPlainValuesGetTheRevisionOfTheGeneralPath() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        let values: [String: Any] = [
            "name": "Milk \"2%\"", "priority": 2, "done": false, "note": NSNull(), "ratio": 0.25,
            "taskList": ["id": "list", "owner": "user1"], "tags": ["a", "é"], "counts": [1, 2], "mixed": [1, "x", true],
        ]
        // Straight from the values; then, for the same values, through JSON values (setJSON stores parsed JSON).
        let plain = MutableDocument(id: "plain", data: values)
        try tasks.save(document: plain)
        let json = String(decoding: try JSONSerialization.data(withJSONObject: values), as: UTF8.self)
        let general = try MutableDocument(id: "general", json: json)
        try tasks.save(document: general)
        #expect(plain.revisionID == general.revisionID)
        #expect(try tasks.document(id: "plain")?.toJSON() == tasks.document(id: "general")?.toJSON())
        #expect(plain.toJSON() == general.toJSON())
        // The saved document reads and edits as before.
        #expect(plain.dictionary(forKey: "taskList")?.string(forKey: "owner") == "user1")
        plain.setString("Oat milk", forKey: "name")
        try tasks.save(document: plain)
        #expect(try tasks.document(id: "plain")?.string(forKey: "name") == "Oat milk")
        // A second new document with the ID of an existing one takes the general path (no overwrite).
        let again = MutableDocument(id: "general", data: ["name": "Other"])
        #expect(try tasks.save(document: again, concurrencyControl: .failOnConflict) == false)
        #expect(try tasks.document(id: "general")?.string(forKey: "name") == #"Milk "2%""#)
    }

    @Test func aPatchedSaveOfADocumentInConflictGoesThroughItsTree() throws {
        let directory = TemporaryDirectory()
        let patched = try directory.open("patched")
        let general = try directory.open("general")
        defer {
            try? patched.close()
            try? general.close()
        }
        let (left, right) = (try patched.defaultCollection(), try general.defaultCollection())
        for collection in [left, right] {
            try collection.save(document: MutableDocument(id: "doc", data: ["name": "Milk", "done": false]))
            let first = try #require(try collection.document(id: "doc")?.revisionID)
            let local = try #require(try collection.document(id: "doc")).toMutable().setString("Whole milk", forKey: "name")
            try collection.save(document: local)
            // A branch from elsewhere, losing to the local one.
            _ = try collection.putExistingRevision(
                documentID: "doc", properties: ["name": "Oat milk", "done": false],
                revisionHistory: ["2-0000", first])
        }
        let fast = try #require(try left.document(id: "doc")).toMutable().setBoolean(true, forKey: "done")
        let slow = try #require(try right.document(id: "doc")).toMutable()
        slow.setData(slow.toDictionary())
        slow.setBoolean(true, forKey: "done")
        try left.save(document: fast)
        try right.save(document: slow)
        #expect(fast.revisionID == slow.revisionID && fast.revisionID?.hasPrefix("3-") == true)
        let leftTree = try Self.tree(left, "doc")
        #expect(try leftTree == Self.tree(right, "doc"))
        #expect(try left.revisionTree(documentID: "doc")?.leaves.count == 2, "\(leftTree)")
    }

    @Test func aDocumentChangedSinceItWasReadTakesTheConflictPath() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        try tasks.save(document: MutableDocument(id: "task", data: ["name": "Milk", "done": false]))

        let stale = try #require(try tasks.document(id: "task")).toMutable().setBoolean(true, forKey: "done")
        let other = try #require(try tasks.document(id: "task")).toMutable().setString("Oat milk", forKey: "name")
        try tasks.save(document: other)

        // failOnConflict: nothing saved.
        #expect(try tasks.save(document: stale, concurrencyControl: .failOnConflict) == false)
        #expect(try tasks.document(id: "task")?.revisionID == other.revisionID)
        // A handler sees the current revision and merges into the document being saved.
        var seen: String?
        let saved = try tasks.save(document: stale) { mine, current in
            seen = current?.string(forKey: "name")
            mine.setString(current?.string(forKey: "name"), forKey: "name")
            return true
        }
        #expect(saved && seen == "Oat milk")
        let current = try #require(try tasks.document(id: "task"))
        #expect(current.string(forKey: "name") == "Oat milk" && current.boolean(forKey: "done"))
        #expect(current.revisionID?.hasPrefix("3-") == true)
        #expect(try tasks.revisionTree(documentID: "task")?.leaves.count == 1)
    }

    @Test func whatChangedBesideTheRevisionSurvivesAPatchedSave() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open()
        defer { try? db.close() }
        let tasks = try db.defaultCollection()
        for round in 0..<3 {
            try tasks.save(document: MutableDocument(id: "task-\(round)", data: ["name": "Milk", "done": false]))
            try tasks.save(document: try #require(try tasks.document(id: "task-\(round)")).toMutable().setInt(1, forKey: "n"))
        }

        // An expiration set after the read stays.
        let expiring = try #require(try tasks.document(id: "task-0")).toMutable().setBoolean(true, forKey: "done")
        let expiration = Date(timeIntervalSinceNow: 3_600)
        try tasks.setDocumentExpiration(id: "task-0", expiration: expiration)
        try tasks.save(document: expiring)
        let kept = try #require(try tasks.getDocumentExpiration(id: "task-0"))
        #expect(abs(kept.timeIntervalSince(expiration)) < 0.01)

        // Compaction after the read (it drops the ancestors' bodies without a new sequence): the save is based
        // on the compacted tree, which keeps no body but the new revision's parent's.
        let compacted = try #require(try tasks.document(id: "task-1")).toMutable().setBoolean(true, forKey: "done")
        try db.performMaintenance(type: .compact)
        try tasks.save(document: compacted)
        let tree = try #require(try tasks.revisionTree(documentID: "task-1"))
        #expect(tree.nodes.count == 3)
        #expect(tree.nodes.filter(\.hasBody).map { $0.revisionID.prefix(2) } == ["2-", "3-"])

        // A document purged after the read is created again.
        let purged = try #require(try tasks.document(id: "task-2")).toMutable().setBoolean(true, forKey: "done")
        try tasks.purge(id: "task-2")
        try tasks.save(document: purged)
        #expect(try tasks.document(id: "task-2")?.boolean(forKey: "done") == true)
        #expect(try tasks.document(id: "task-2")?.revisionID?.hasPrefix("1-") == true)
    }
}
