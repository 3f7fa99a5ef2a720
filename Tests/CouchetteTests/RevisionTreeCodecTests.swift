import CouchetteCore
import CouchetteTestSupport
import Testing

@testable import Couchette

/// The stored tree's byte-level paths: decimals written and read without strings, and a save on top of a one-branch
/// tree (``RevisionTreeCodec/LinearHistory``) writing exactly what encoding the pruned tree would.
@Suite(.timeLimit(.minutes(2))) struct RevisionTreeCodecTests {
    @Test func decimalsAreWrittenAsSwiftPrintsThemAndReadBackExactly() {
        var random = SplitMix64(state: 7)
        let samples = [0, 1, 9, 10, 19, 20, 99, 100, -1, -9, -10, -100, Int.max, Int.min]
            + (0..<500).map { _ in Int(truncatingIfNeeded: random.next()) >> Int(random.next() % 63) }
        for value in samples {
            var bytes: [UInt8] = []
            RevisionTreeCodec.appendDecimal(value, to: &bytes)
            #expect(bytes == Array(String(value).utf8))
            if String(value.magnitude).count <= 18 {
                #expect(RevisionTreeCodec.isDecimal(bytes, value), "\(value)")
            }
            #expect(!RevisionTreeCodec.isDecimal(bytes, value &+ 1), "\(value)")
        }
        for text in ["", "-", "01", "-0", "00", "1a", "+1", " 1", "1 "] {
            #expect(!RevisionTreeCodec.isDecimal(Array(text.utf8), 0), "\(text)")
            #expect(!RevisionTreeCodec.isDecimal(Array(text.utf8), 1), "\(text)")
        }
    }

    @Test func aSaveOnAOneBranchTreeWritesWhatTheTreeWouldStore() throws {
        var random = SplitMix64(state: 11)
        for _ in 0..<200 {
            let generations = Int(random.next() % 25) + 1
            let depth = Int(random.next() % 22) + 1
            var tree = CouchetteCore.RevisionTree()
            var current: RevisionID?
            for generation in 1...generations {
                current = try tree.addLocalEdit(parent: current, body: ["n": .int(Int64(generation))], deleted: false)
                tree.prune(toDepth: depth)
            }
            let parent = try #require(current)
            // As a save stores it: of the ancestors only the current revision's parent keeps its body.
            var stored = tree
            if stored.count > 2 {
                stored.removeAncestorBodies(keeping: Set([stored[parent]?.parent].compactMap { $0 }))
            }
            let bytes = RevisionTreeCodec.encode(stored)
            let history = try #require(RevisionTreeCodec.LinearHistory(bytes, current: parent.description))
            #expect(RevisionTreeCodec.LinearHistory(bytes, current: "1-0123") == nil)

            var next = tree
            let added = try next.addLocalEdit(parent: parent, body: ["n": 0], deleted: false)
            next.prune(toDepth: depth)
            if next.count > 2 { next.removeAncestorBodies(keeping: [parent]) }
            let currentBody = try #require(tree[parent]?.body).serialized()
            let appended = history.appending(added.description, currentBody: currentBody, maximumDepth: depth)
            #expect(
                appended == RevisionTreeCodec.encode(next),
                "\(generations) generations, depth \(depth): \(String(decoding: appended, as: UTF8.self))")
        }
    }
}
