import CouchetteCore
import CouchetteTestSupport
import PropertyBased
import Testing

/// A small deterministic generator for shuffles, seeded by the property test's input.

/// A revision as a replica would receive it: the revision, its body and flag, and its whole history.
private struct Edit {
    var id: RevisionID
    var deleted: Bool
    var body: JSONValue
    var history: [RevisionID]
}

/// Builds a random revision forest from a script of numbers: each number picks a parent among the revisions
/// made so far (or a new root) and whether the edit is a deletion.
private func edits(from script: [Int]) -> [Edit] {
    var made: [Edit] = []
    for (index, step) in script.enumerated() {
        let parentIndex = step % (made.count + 1)
        let parent = parentIndex < made.count ? made[parentIndex] : nil
        let deleted = (step / 7) % 4 == 0
        let body: JSONValue = deleted ? [:] : ["step": .int(Int64(index))]
        let id = try! RevisionID.next(after: parent?.id, body: ["step": .int(Int64(index))], deleted: deleted)
        made.append(Edit(id: id, deleted: deleted, body: body, history: [id] + (parent?.history ?? [])))
    }
    return made
}

private func tree(inserting edits: some Sequence<Edit>) -> RevisionTree {
    var tree = RevisionTree()
    for edit in edits { try! tree.insert(edit.id, body: edit.body, deleted: edit.deleted, history: edit.history) }
    return tree
}

private let scripts = Gen.int(in: 0...10_000).array(of: 1...25)
private let seeds = Gen.uint64(in: 0...UInt64.max)

@Suite(.timeLimit(.minutes(5))) struct RevisionTreePropertyTests {
    @Test func winnerAndLeavesDoNotDependOnInsertionOrder() async {
        await propertyCheck(count: 200, input: scripts, seeds) { script, seed in
            let all = edits(from: script)
            var generator = SplitMix64(state: seed)
            let inOrder = tree(inserting: all)
            let shuffled = tree(inserting: all.shuffled(using: &generator))
            #expect(inOrder == shuffled)
            #expect(inOrder.winner == shuffled.winner)
            #expect(inOrder.leaves == shuffled.leaves)
            // Only leaves' histories, in a random order, make the same tree too.
            let leafIDs = Set(inOrder.leaves.map(\.id))
            let onlyLeaves = tree(inserting: all.filter { leafIDs.contains($0.id) }.shuffled(using: &generator))
            #expect(Set(onlyLeaves.leaves.map(\.id)) == leafIDs)
            #expect(onlyLeaves.winner?.id == inOrder.winner?.id)
        }
    }

    @Test func winnerIsTheMaximumLeafByTheDocumentedOrder() async {
        await propertyCheck(count: 200, input: scripts) { script in
            let result = tree(inserting: edits(from: script))
            let leaves = result.leaves
            let live = leaves.filter { !$0.isDeleted }
            let expected = (live.isEmpty ? leaves : live).max { $0.id < $1.id }
            #expect(result.winner == expected)
            #expect(result.isConflicted == (live.count >= 2))
            #expect(result.isDeleted == live.isEmpty)
        }
    }

    @Test func insertingTheSameHistoryTwiceIsANoOp() async {
        await propertyCheck(count: 200, input: scripts, seeds) { script, seed in
            let all = edits(from: script)
            var generator = SplitMix64(state: seed)
            var result = tree(inserting: all)
            let before = result
            for edit in all.shuffled(using: &generator) {
                let outcome = try result.insert(edit.id, body: edit.body, deleted: edit.deleted, history: edit.history)
                #expect(outcome == .alreadyPresent)
            }
            #expect(result == before)
        }
    }

    @Test func mergingTreesIsCommutativeAndEqualsInsertingEverything() async {
        await propertyCheck(count: 200, input: scripts, seeds) { script, seed in
            let all = edits(from: script)
            var generator = SplitMix64(state: seed)
            var left: [Edit] = []
            var right: [Edit] = []
            for edit in all {
                switch generator.next() % 3 {
                case 0: left.append(edit)
                case 1: right.append(edit)
                default: left.append(edit); right.append(edit)
                }
            }
            let a = tree(inserting: left)
            let b = tree(inserting: right)
            #expect(a.merging(b) == b.merging(a))
            let union = tree(inserting: all)
            #expect(Set(a.merging(b).leaves.map(\.id)) == Set(union.leaves.map(\.id)))
            #expect(a.merging(b).winner?.id == union.winner?.id)
            #expect(a.merging(a) == a)
        }
    }

    @Test func pruningNeverLosesALeafOrAConflictBranch() async {
        await propertyCheck(count: 200, input: scripts, Gen.int(in: 1...6)) { script, limit in
            let full = tree(inserting: edits(from: script))
            var pruned = full
            pruned.prune(toDepth: limit)
            #expect(pruned.leaves.map(\.id) == full.leaves.map(\.id))
            #expect(pruned.leaves.map(\.isDeleted) == full.leaves.map(\.isDeleted))
            #expect(pruned.leaves.map(\.body) == full.leaves.map(\.body))
            #expect(pruned.winner?.id == full.winner?.id)
            #expect(pruned.conflictingLeaves.map(\.id) == full.conflictingLeaves.map(\.id))
            for leaf in full.leaves {
                // Each branch keeps at least its newest `limit` revisions; an ancestor kept for another
                // branch stays connected, so a history may be longer, but it is always the same history.
                let kept = pruned.history(of: leaf.id)
                let original = full.history(of: leaf.id)
                #expect(kept.count >= min(limit, original.count))
                #expect(Array(original.prefix(kept.count)) == kept)
            }
            // Nothing is kept that no leaf needs.
            let needed = Set(full.leaves.flatMap { full.history(of: $0.id).prefix(limit) })
            #expect(Set(pruned.nodes.map(\.id)) == needed)
            var again = pruned
            #expect(again.prune(toDepth: limit).isEmpty)
        }
    }
}
