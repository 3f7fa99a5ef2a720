import CouchetteCore
import Testing

@Suite(.timeLimit(.minutes(5))) struct RevisionIDTests {
    @Test func parsesAndFormats() throws {
        let rev = try RevisionID(parsing: "12-7051cbe5c8faecd085a3fa619e6e6337")
        #expect(rev.generation == 12)
        #expect(rev.digest == "7051cbe5c8faecd085a3fa619e6e6337")
        #expect(rev.description == "12-7051cbe5c8faecd085a3fa619e6e6337")
        #expect(try RevisionID(parsing: "1-a-b").digest == "a-b")
    }

    @Test(arguments: ["", "abc", "-abc", "0-abc", "x-abc", "1-", "+1-abc", "-1-abc", "1 -abc", "1-a b", "99999999999999999999-a"])
    func rejectsMalformedIDs(text: String) {
        #expect {
            try RevisionID(parsing: text)
        } throws: { error in
            let error = error as? CoreError
            return error?.code == .invalidRevisionID && error?.status == 400
        }
    }

    @Test func ordersByGenerationNumericallyThenDigestBytewise() throws {
        let nine = try RevisionID(parsing: "9-b")
        let ten = try RevisionID(parsing: "10-a")
        #expect(nine < ten)
        #expect(try RevisionID(parsing: "3-abc") < RevisionID(parsing: "3-abd"))
        #expect(try RevisionID(parsing: "3-B") < RevisionID(parsing: "3-a"))
    }

    @Test func nextIDIsAPureFunctionOfParentBodyAndDeletion() throws {
        let parent = try RevisionID(parsing: "1-abc")
        let body: JSONValue = ["type": "task", "title": "Milk"]
        let first = try RevisionID.next(after: parent, body: body, deleted: false)
        let again = try RevisionID.next(after: parent, body: ["title": "Milk", "type": "task"], deleted: false)
        #expect(first == again)
        #expect(first.generation == 2)
        #expect(first.digest.count == 32)
        #expect(first.digest.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(try RevisionID.next(after: parent, body: body, deleted: true) != first)
        #expect(try RevisionID.next(after: nil, body: body, deleted: false).generation == 1)
        #expect(try RevisionID.next(after: RevisionID(parsing: "1-abd"), body: body, deleted: false) != first)
        #expect(try RevisionID.next(after: parent, body: ["type": "task", "title": "Eggs"], deleted: false) != first)
    }

    @Test func nextIDsAreSyncGatewaysAsTheSeedsShow() throws {
        // The tutorial's _bulk_docs answers (Sync Gateway 1.4): the IDs depend on the body only.
        #expect(
            try RevisionID.next(after: nil, body: ["name": "Today", "type": "task-list", "owner": "user1"], deleted: false)
                .description == "1-477f7c4f36a31ce9e86a5f465b168b8a")
        #expect(
            try RevisionID.next(after: nil, body: ["type": "task-list", "name": "Groceries"], deleted: false).description
                == "1-e4ac377fc9bd3345ddf5892b509c4d79")
        #expect(
            try RevisionID.next(after: nil, body: ["_id": "x.1", "type": "task-list", "owner": "user1"], deleted: false)
                .description == "1-39539a8ec6ddd252d6aafe1f7e3efd9a")
    }

    static let syncGatewayNumberVectors: [(JSONValue, String)] = [
        (JSONValue.double(2.0), "1-035168c88bd4b80fb098a8da72f881ce"),  // {"n":2}
        (.int(2), "1-035168c88bd4b80fb098a8da72f881ce"),
        (.double(1e20), "1-22d383d03236bebda7a7b71712da326b"),  // {"n":100000000000000000000}
        (.double(1e21), "1-2687b13775875156f7331de3235bd29e"),  // {"n":1e+21}
        (.double(1e-7), "1-dcaa91ca6823aae760da27bbe80b37e9"),  // {"n":1e-7}
        (.double(-0.0), "1-e443818262c3e968c080885dcc3a7d9f"),  // {"n":-0}
        (.int(9_007_199_254_740_993), "1-b44d43711b48485c172aa9166c1edbfa"),  // {"n":9007199254740992}
        (.int(.max), "1-f95817359067e46c97c2575ca05d1729"),  // {"n":9223372036854776000}
        (.double(0.1), "1-38a031fd1f721167eeb43689d82e014d"),  // {"n":0.1}
        (
            [.double(1.5e-7), .double(1e-6), .double(123456.789), .double(5e-324), .double(1.7976931348623157e308)],
            "1-711afab2cf58e8d816062c64ade2c131"  // {"n":[1.5e-7,0.000001,123456.789,5e-324,1.7976931348623157e+308]}
        ),
    ]

    /// MD5 of `[0]` + the canonical text Go writes for each body (worked out by hand from `encoding/json`'s rules,
    /// hashed outside Swift): the IDs Sync Gateway gives these bodies.
    @Test(arguments: syncGatewayNumberVectors)
    func nextIDsOfBodiesWithNumbersAreSyncGateways(number: JSONValue, expected: String) throws {
        let body: JSONValue = ["n": number]
        #expect(try RevisionID.next(after: nil, body: body, deleted: false).description == expected)
        // The shortcut through an already serialized body must not change the ID.
        let shortcut = try RevisionID.next(after: nil, body: body, deleted: false, serializedBody: body.serialized())
        #expect(shortcut.description == expected)
    }

    @Test func nextIDIgnoresSpecialPropertiesButNotAttachments() throws {
        let body: JSONValue = ["type": "task"]
        let plain = try RevisionID.next(after: nil, body: body, deleted: false)
        let withSpecials = try RevisionID.next(
            after: nil, body: ["type": "task", "_id": "x", "_rev": "1-a", "_revisions": ["start": 1]], deleted: false)
        #expect(plain == withSpecials)
        let attachment: JSONValue = ["content_type": "text/plain", "digest": "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=", "length": 5]
        let withAttachment = try RevisionID.next(
            after: nil, body: ["type": "task", "_attachments": ["a.txt": attachment]], deleted: false)
        #expect(withAttachment != plain)
        var inline = attachment
        inline["data"] = "aGVsbG8="
        inline["revpos"] = 1
        let withInline = try RevisionID.next(
            after: nil, body: ["type": "task", "_attachments": ["a.txt": inline]], deleted: false)
        #expect(withInline == withAttachment)
    }

    @Test func rejectsParentsLongerThan255Bytes() throws {
        let parent = try RevisionID(generation: 1, digest: String(repeating: "a", count: 255))
        #expect(throws: CoreError.self) { try RevisionID.next(after: parent, body: [:], deleted: false) }
    }

    @Test func codableAsAString() throws {
        let rev = try RevisionID(parsing: "2-ab")
        #expect(try JSONValue(encoding: [rev]) == ["2-ab"])
        #expect(try JSONValue.string("2-ab").decode(as: RevisionID.self) == rev)
        #expect(throws: (any Error).self) { try JSONValue.string("nope").decode(as: RevisionID.self) }
    }
}

@Suite(.timeLimit(.minutes(5))) struct RevisionHistoryTests {
    @Test func expandsStartAndIDs() throws {
        let history = try RevisionHistory(json: ["start": 3, "ids": ["c", "b", "a"]])
        #expect(history.revisionIDs.map(\.description) == ["3-c", "2-b", "1-a"])
        #expect(history.newest.description == "3-c")
        #expect(history.json == ["start": 3, "ids": ["c", "b", "a"]])
        // Pruned histories may start above their length.
        #expect(try RevisionHistory(json: ["start": 10, "ids": ["j", "i"]]).revisionIDs.last?.description == "9-i")
    }

    @Test(arguments: [
        JSONValue.array([]), ["start": 1], ["ids": ["a"]], ["start": "3", "ids": ["a"]], ["start": 3, "ids": []],
        ["start": 1, "ids": ["b", "a"]], ["start": 2, "ids": ["b", 1]], ["start": 2, "ids": ["b", ""]],
        ["start": 2.5, "ids": ["b"]], ["start": 0, "ids": ["a"]],
    ])
    func rejectsBadRevisions(json: JSONValue) {
        #expect {
            try RevisionHistory(json: json)
        } throws: { ($0 as? CoreError)?.code == .invalidRevisionHistory }
    }

    @Test func rejectsHistoriesWithGaps() throws {
        let ids = try ["4-d", "2-b", "1-a"].map { try RevisionID(parsing: $0) }
        #expect {
            try RevisionHistory(revisionIDs: ids)
        } throws: { ($0 as? CoreError)?.message.contains("gap") == true }
        var tree = RevisionTree()
        #expect(throws: CoreError.self) { try tree.insert(ids[0], body: [:], deleted: false, history: ids) }
        #expect(tree.isEmpty)
    }

    @Test func truncatesAtKnownRevisionsAndLimit() throws {
        let history = try RevisionHistory(start: 5, ids: ["e", "d", "c", "b", "a"])
        let known: Set = [try RevisionID(parsing: "3-c")]
        #expect(history.truncated(after: known).ids == ["e", "d", "c"])
        #expect(history.truncated(limit: 2).ids == ["e", "d"])
        #expect(history.truncated(limit: 2, after: known).ids == ["e", "d"])
    }
}
