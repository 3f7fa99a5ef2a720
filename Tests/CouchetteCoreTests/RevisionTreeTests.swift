import CouchetteCore
import Testing

private func rev(_ text: String) -> RevisionID { try! RevisionID(parsing: text) }

@Suite(.timeLimit(.minutes(5))) struct RevisionTreeTests {
    // MARK: - Local edits (§4.2)

    @Test func createsUpdatesAndDeletesLocally() throws {
        var tree = RevisionTree()
        let first = try tree.addLocalEdit(parent: nil, body: ["type": "task-list"], deleted: false)
        #expect(first.generation == 1)
        #expect(tree.winner?.id == first)
        #expect(throws: CoreError.self) { try tree.addLocalEdit(parent: nil, body: ["x": 1], deleted: false) }
        let second = try tree.addLocalEdit(parent: first, body: ["type": "task-list", "name": "x"], deleted: false)
        #expect(second.generation == 2)
        #expect(tree.leaves.map(\.id) == [second])
        let tombstone = try tree.addLocalEdit(parent: second, body: [:], deleted: true)
        #expect(tree.isDeleted)
        #expect(tree.winner?.id == tombstone)
        // Recreating a deleted document continues from the tombstone.
        let revived = try tree.addLocalEdit(parent: nil, body: ["type": "task-list"], deleted: false)
        #expect(revived.generation == 4)
        #expect(tree.history(of: revived) == [revived, tombstone, second, first])
    }

    @Test func rejectsStaleOrUnknownParentsWith409() throws {
        var empty = RevisionTree()
        #expect {
            try empty.addLocalEdit(parent: rev("1-a"), body: [:], deleted: false)
        } throws: { ($0 as? CoreError)?.status == 409 }
        var tree = RevisionTree()
        let first = try tree.addLocalEdit(parent: nil, body: ["v": 1], deleted: false)
        _ = try tree.addLocalEdit(parent: first, body: ["v": 2], deleted: false)
        #expect {
            try tree.addLocalEdit(parent: first, body: ["v": 3], deleted: false)
        } throws: { ($0 as? CoreError)?.code == .conflict }
        #expect {
            try tree.addLocalEdit(parent: rev("7-zzz"), body: ["v": 3], deleted: false)
        } throws: { ($0 as? CoreError)?.code == .conflict }
        #expect(tree.count == 2)
    }

    @Test func editingALosingLeafExtendsItsBranch() throws {
        var tree = RevisionTree()
        try tree.insert(rev("2-b"), body: ["v": "b"], deleted: false, history: [rev("2-b"), rev("1-a")])
        try tree.insert(rev("2-c"), body: ["v": "c"], deleted: false, history: [rev("2-c"), rev("1-a")])
        #expect(tree.isConflicted)
        #expect(tree.winner?.id == rev("2-c"))
        #expect(tree.conflictingLeaves.map(\.id) == [rev("2-b")])
        // Resolve: delete the losing branch.
        _ = try tree.addLocalEdit(parent: rev("2-b"), body: [:], deleted: true)
        #expect(!tree.isConflicted)
        #expect(tree.isBranched)
        #expect(tree.winner?.id == rev("2-c"))
    }

    // MARK: - Winner (§4.4)

    @Test func liveLeafBeatsHigherTombstoneThenGenerationThenDigest() throws {
        var tree = RevisionTree()
        try tree.insert(rev("5-a"), body: [:], deleted: true, history: [rev("5-a")])
        try tree.insert(rev("2-a"), body: ["x": 1], deleted: false, history: [rev("2-a")])
        #expect(tree.winner?.id == rev("2-a"))
        #expect(!tree.isDeleted)
        try tree.insert(rev("2-b"), body: ["x": 2], deleted: false, history: [rev("2-b")])
        #expect(tree.winner?.id == rev("2-b"))
        try tree.insert(rev("10-a"), body: ["x": 3], deleted: false, history: [rev("10-a")])
        #expect(tree.winner?.id == rev("10-a"))

        var allDeleted = RevisionTree()
        try allDeleted.insert(rev("3-a"), body: [:], deleted: true, history: [rev("3-a")])
        try allDeleted.insert(rev("4-a"), body: [:], deleted: true, history: [rev("4-a")])
        #expect(allDeleted.isDeleted)
        #expect(allDeleted.winner?.id == rev("4-a"))
    }

    // MARK: - Existing revisions (§4.3)

    @Test func insertsExistingRevisionsWithMissingAncestorsWithoutBodies() throws {
        var tree = RevisionTree()
        let history = try RevisionHistory(start: 3, ids: ["c", "b", "a"])
        let result = try tree.insert(body: ["v": 3], deleted: false, history: history)
        #expect(result == .inserted(addedAncestors: 2))
        #expect(tree[rev("2-b")]?.body == nil)
        #expect(tree[rev("3-c")]?.body == ["v": 3])
        #expect(tree[rev("1-a")]?.parent == nil)
        #expect(tree.revisionHistory(of: rev("3-c")) == history)
        #expect(try tree.insert(body: ["v": 3], deleted: false, history: history) == .alreadyPresent)
        // A history that does not reach the tree starts a new root.
        try tree.insert(rev("8-x"), body: [:], deleted: false, history: [rev("8-x"), rev("7-w")])
        #expect(tree[rev("7-w")]?.parent == nil)
        #expect(tree.leaves.count == 2)
    }

    @Test func rejectsAHistoryThatDoesNotStartWithTheRevision() {
        var tree = RevisionTree()
        #expect(throws: CoreError.self) {
            try tree.insert(rev("2-b"), body: [:], deleted: false, history: [rev("2-c"), rev("1-a")])
        }
    }

    // MARK: - Revs-diff

    @Test func revsDiffReportsMissingRevisionsAndPossibleAncestors() throws {
        var tree = RevisionTree()
        try tree.insert(rev("2-b"), body: [:], deleted: false, history: [rev("2-b"), rev("1-a")])
        try tree.insert(rev("2-c"), body: [:], deleted: false, history: [rev("2-c"), rev("1-a")])
        let diff = tree.revsDiff([rev("1-a"), rev("3-d"), rev("2-b"), rev("3-d"), rev("2-z")])
        #expect(diff.missing == [rev("3-d"), rev("2-z")])
        #expect(diff.possibleAncestors == [rev("2-c"), rev("2-b")])
        #expect(tree.revsDiff([rev("1-a")]) == RevisionTree.RevsDiff(missing: [], possibleAncestors: []))
        #expect(tree.revsDiff([rev("1-q")]).possibleAncestors.isEmpty)
    }

    // MARK: - Pruning

    @Test func pruningKeepsEveryLeafAndTheNewestRevisionsOfEachBranch() throws {
        var tree = RevisionTree()
        var parent: RevisionID?
        for generation in 1...10 {
            parent = try tree.addLocalEdit(parent: parent, body: ["g": .int(Int64(generation))], deleted: false)
        }
        let main = parent!
        let branchPoint = tree.history(of: main)[6]  // generation 4
        try tree.insert(rev("5-zzz"), body: ["branch": true], deleted: false, history: [rev("5-zzz"), branchPoint])
        let removed = tree.prune(toDepth: 3)
        #expect(!removed.isEmpty)
        #expect(Set(tree.leaves.map(\.id)) == [main, rev("5-zzz")])
        #expect(tree.history(of: main).count == 3)
        #expect(tree.history(of: rev("5-zzz")).count == 3)
        #expect(tree.winner?.id == main)
        #expect(tree.nodes.filter { $0.parent == nil }.count == 2)
    }

    @Test func removesAncestorBodiesButKeepsLeaves() throws {
        var tree = RevisionTree()
        let first = try tree.addLocalEdit(parent: nil, body: ["v": 1], deleted: false)
        let second = try tree.addLocalEdit(parent: first, body: ["v": 2], deleted: false)
        tree.removeAncestorBodies()
        #expect(tree[first]?.body == nil)
        #expect(tree[second]?.body == ["v": 2])
    }

    @Test func encodesAndDecodesLosslessly() throws {
        var tree = RevisionTree()
        try tree.insert(rev("3-c"), body: ["v": 3], deleted: false, history: [rev("3-c"), rev("2-b"), rev("1-a")])
        try tree.insert(rev("3-d"), body: [:], deleted: true, history: [rev("3-d"), rev("2-b")])
        let json = try JSONValue(encoding: tree)
        #expect(try json.decode(as: RevisionTree.self) == tree)
    }
}

@Suite(.timeLimit(.minutes(5))) struct RevisionTreeConflictEditTests {
    @Test func allowConflictBranchesOffAnAncestor() throws {
        var tree = RevisionTree()
        let first = try tree.addLocalEdit(parent: nil, body: ["v": 1], deleted: false)
        let second = try tree.addLocalEdit(parent: first, body: ["v": 2], deleted: false)
        #expect(throws: CoreError.self) { try tree.addLocalEdit(parent: first, body: ["v": 3], deleted: false) }
        let branch = try tree.addLocalEdit(parent: first, body: ["v": 3], deleted: false, allowConflict: true)
        #expect(branch.generation == 2)
        #expect(tree.isConflicted)
        #expect(Set(tree.leaves.map(\.id)) == [second, branch])
        let root = try tree.addLocalEdit(parent: nil, body: ["v": 4], deleted: false, allowConflict: true)
        #expect(root.generation == 1)
        #expect(tree.leaves.count == 3)
        #expect(throws: CoreError.self) {
            try tree.addLocalEdit(parent: RevisionID(parsing: "9-nope"), body: [:], deleted: false, allowConflict: true)
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct RevisionTreePurgeTests {
    private func rev(_ text: String) -> RevisionID { try! RevisionID(parsing: text) }

    @Test func purgingALeafRemovesOnlyTheAncestorsNoOtherLeafNeeds() throws {
        var tree = RevisionTree()
        try tree.insert(rev("3-c"), body: [:], deleted: false, history: [rev("3-c"), rev("2-b"), rev("1-a")])
        try tree.insert(rev("3-d"), body: [:], deleted: false, history: [rev("3-d"), rev("2-x"), rev("1-a")])
        #expect(tree.purge([rev("3-d"), rev("2-b"), rev("9-z")]) == [rev("3-d")])
        #expect(tree.nodes.map(\.id) == [rev("1-a"), rev("2-b"), rev("3-c")])
        #expect(tree.winner?.id == rev("3-c"))
        #expect(tree.purge([rev("3-c")]) == [rev("3-c")])
        #expect(tree.isEmpty)
    }
}
