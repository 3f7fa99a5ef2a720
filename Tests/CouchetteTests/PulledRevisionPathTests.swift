import Couchette
import CouchetteCore
import CouchetteTestSupport
import Foundation
import PropertyBased
import Testing

/// A pulled first revision whose properties are JSON values is serialized before the lock and inserted unless the
/// document exists (`Collection.putExistingRevision`); other properties take the general way. These tests hold the two
/// to the same documents, trees and answers, also when more revisions of the document follow.
@Suite(.timeLimit(.minutes(5))) struct PulledRevisionPathTests {
    static func randomValue(_ generator: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth < 2 ? 8 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: -1_000...1_000, using: &generator))
        case 3: return .double(Double(Int.random(in: -99...99, using: &generator)) / 8)
        case 4, 5: return .string(["", "x", "quote\"d", "é ü", "line\nbreak"].randomElement(using: &generator)!)
        case 6: return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in randomValue(&generator, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                members[["a", "b", "@type", "k"].randomElement(using: &generator)!] = randomValue(&generator, depth: depth + 1)
            }
            return .object(members)
        }
    }

    /// Properties as a pull hands them over (JSON values), with some metadata keys.
    static func randomProperties(_ generator: inout SplitMix64) -> [String: JSONValue] {
        var properties: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &generator) {
            properties[["type", "title", "n", "list", "owner", "é"].randomElement(using: &generator)!] = randomValue(&generator)
        }
        if Bool.random(using: &generator) { properties["_id"] = "ignored" }
        if Bool.random(using: &generator) { properties["_revisions"] = ["start": 1, "ids": ["x"]] }
        return properties
    }

    @Test func pulledFirstRevisionsStoreWhatTheGeneralWayStores() async throws {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var generator = SplitMix64(state: seed)
            let directory = TemporaryDirectory()
            let fast = try directory.open("fast")
            let general = try directory.open("general")
            defer {
                try? fast.close()
                try? general.close()
            }
            let id = "doc"
            // One to three revisions: first revisions (a second one makes a conflict), then a child of the first.
            var revisions: [(properties: [String: JSONValue], history: [String])] = []
            let first = "1-" + String(format: "%032x", UInt64.random(in: 0...UInt64.max, using: &generator))
            revisions.append((Self.randomProperties(&generator), [first]))
            if Bool.random(using: &generator) {
                let other = "1-" + String(format: "%032x", UInt64.random(in: 0...UInt64.max, using: &generator))
                revisions.append((Self.randomProperties(&generator), [other]))
            }
            if Bool.random(using: &generator) { revisions.append((Self.randomProperties(&generator), ["2-abc", first])) }
            // Repeating a revision changes nothing.
            revisions.append(revisions[0])
            for revision in revisions {
                let added = try fast.defaultCollection().putExistingRevision(
                    documentID: id, properties: revision.properties, revisionHistory: revision.history)
                // Foundation values: the general way only.
                let foundation = try JSONValue.object(revision.properties).foundationObject as! [String: Any]
                let addedGenerally = try general.defaultCollection().putExistingRevision(
                    documentID: id, properties: foundation, revisionHistory: revision.history)
                #expect(added == addedGenerally, "\(revision.history)")
            }
            let fastDocument = try #require(try fast.defaultCollection().document(id: id))
            let generalDocument = try #require(try general.defaultCollection().document(id: id))
            #expect(fastDocument.revisionID == generalDocument.revisionID)
            #expect(fastDocument.toJSONValue() == generalDocument.toJSONValue())
            #expect(try SavePathTests.tree(fast.defaultCollection(), id) == SavePathTests.tree(general.defaultCollection(), id))
            #expect(try fast.defaultCollection().changes(since: 0, limit: 10).count == 1)
        }
    }

    @Test func aReservedNameOrADeletionGoesTheGeneralWay() throws {
        let directory = TemporaryDirectory()
        let db = try directory.open("db")
        defer { try? db.close() }
        let collection = try db.defaultCollection()
        #expect(throws: CouchetteError.self) {
            try collection.putExistingRevision(
                documentID: "reserved", properties: ["_private": JSONValue.int(1)], revisionHistory: ["1-aa"])
        }
        #expect(try collection.document(id: "reserved") == nil)
        #expect(try collection.putExistingRevision(
            documentID: "gone", properties: ["_deleted": true, "n": JSONValue.int(1)], revisionHistory: ["1-bb"]))
        #expect(try collection.document(id: "gone") == nil)
        #expect(try collection.revisionTree(documentID: "gone")?.nodes.first?.isDeletion == true)
    }
}
