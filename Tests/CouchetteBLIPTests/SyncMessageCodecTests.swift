import CouchetteCore
import CouchetteTestSupport
import PropertyBased
import Testing

@testable import CouchetteBLIP

/// The sync protocol's typed messages (blip-sync-protocol.md §3) read back what they wrote, through the properties'
/// wire encoding, for any values: the passive session and the active replicator share these codecs.
@Suite(.timeLimit(.minutes(2))) struct SyncMessageCodecTests {
    /// A request as the other side receives it: properties through their wire encoding.
    private static func received(_ properties: BLIPProperties, body: [UInt8] = []) throws -> BLIPMessage {
        BLIPMessage(type: .request, number: 1, properties: try BLIPProperties(decoding: properties.encoded()), body: body)
    }

    private static func identifier(_ random: inout SplitMix64) -> String {
        let alphabet = Array("abcXYZ019-_:/ é")
        return String((0..<Int.random(in: 1...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
    }

    private static func revisionID(_ random: inout SplitMix64) -> String {
        "\(Int.random(in: 1...5_000, using: &random))-\(random.bytes(4).map { String($0, radix: 16) }.joined())"
    }

    @Test func offeredChangesAndTheirAnswersRoundTrip() async {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(state: seed)
            let entries = (0..<Int.random(in: 0...20, using: &random)).map { index in
                OfferedChange(
                    sequence: Bool.random(using: &random) ? .int(Int64(index)) : .string("\(index):\(index + 1)"),
                    documentID: Self.identifier(&random), revisionID: Self.revisionID(&random),
                    flags: [0, 1, 2, 3, 4].randomElement(using: &random)!)
            }
            #expect((try? OfferedChange.entries(in: OfferedChange.body(of: entries))) == entries)
            let answers = entries.map { _ in
                Bool.random(using: &random)
                    ? RevsDiffAnswer.have
                    : .wanted(knownAncestors: (0..<Int.random(in: 0...3, using: &random)).map { _ in Self.revisionID(&random) })
            }
            // Trailing `.have`s are left out of the reply and read back as `.have`.
            let reply = BLIPMessage(type: .request, number: 1).reply(answers: answers.map(\.json))
            #expect(RevsDiffAnswer.answers(in: reply.body, count: answers.count) == answers)
        }
    }

    @Test func proposalsAndTheirAnswersRoundTrip() async {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(state: seed)
            let proposals = (0..<Int.random(in: 0...20, using: &random)).map { _ in
                ProposedChange(
                    documentID: Self.identifier(&random), revisionID: Self.revisionID(&random),
                    serverRevisionID: Bool.random(using: &random) ? Self.revisionID(&random) : nil)
            }
            let body = JSONValue.array(proposals.map(\.json)).serialized()
            #expect((try? ProposedChange.entries(in: body)) == proposals)
            let answers: [ProposalAnswer] = proposals.map { _ in
                [.send, .have, .conflict(currentRevisionID: nil), .conflict(currentRevisionID: Self.revisionID(&random)),
                 .malformed].randomElement(using: &random)!
            }
            for answer in answers { #expect(ProposalAnswer(json: answer.json) == answer) }
        }
    }

    @Test func revisionMessagesRoundTrip() async throws {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(state: seed)
            let message = RevisionMessage(
                documentID: Self.identifier(&random), revisionID: Self.revisionID(&random),
                history: (0..<Int.random(in: 0...25, using: &random)).map { _ in Self.revisionID(&random) },
                isDeleted: Bool.random(using: &random),
                sequence: Bool.random(using: &random) ? String(Int.random(in: 0...1_000_000, using: &random)) : nil,
                noConflicts: Bool.random(using: &random),
                deltaSource: Bool.random(using: &random) ? Self.revisionID(&random) : nil,
                body: JSONValue.object(["n": .int(Int64.random(in: 0...9, using: &random))]).serialized())
            let read = try? RevisionMessage(Self.received(message.properties, body: message.body))
            #expect(read == message)
            #expect(read?.ancestry == [message.revisionID] + message.history)
        }
    }

    @Test func subscriptionsRoundTrip() async throws {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(state: seed)
            let since: String? = [nil, "0", "12345", "12:3", "now"].randomElement(using: &random)!
            let subscription = SubChangesRequest(
                since: since, continuous: Bool.random(using: &random), activeOnly: Bool.random(using: &random),
                batchSize: Int.random(in: 1...SubChangesRequest.maximumBatch, using: &random),
                allLeaves: Bool.random(using: &random),
                filter: Bool.random(using: &random) ? "sync_gateway/bychannel" : nil,
                channels: Bool.random(using: &random) ? "a,b" : nil,
                documentIDs: Bool.random(using: &random) ? [Self.identifier(&random)] : nil,
                revocations: Bool.random(using: &random))
            let (properties, body) = subscription.message
            #expect((try? Self.received(properties, body: body)).map(SubChangesRequest.init) == subscription)
        }
    }

    @Test("Malformed messages are refused with 400, or answered per entry")
    func malformedMessages() throws {
        #expect(throws: BLIPError.refused(status: 400, reason: "changes needs a JSON array")) {
            try OfferedChange.entries(in: Array("{}".utf8))
        }
        #expect(try OfferedChange.entries(in: Array(#"[[1,"a"],[2,"b","1-x",true]]"#.utf8)) == [
            nil, OfferedChange(sequence: 2, documentID: "b", revisionID: "1-x", flags: OfferedChange.deleted),
        ])
        #expect(try ProposedChange.entries(in: Array(#"[["a"],["b","1-x",""]]"#.utf8)) == [
            nil, ProposedChange(documentID: "b", revisionID: "1-x"),
        ])
        #expect(throws: BLIPError.refused(status: 400, reason: "rev needs id and rev")) {
            try RevisionMessage(Self.received(["Profile": "rev", "id": "a"]))
        }
        let notAnObject = RevisionMessage(documentID: "a", revisionID: "1-x", body: Array("[1]".utf8))
        #expect(throws: BLIPError.refused(status: 400, reason: "The body of \"a\" is not a JSON object")) {
            try notAnObject.bodyObject()
        }
        // A batch past the largest honoured is cut to it; none asked for is the default.
        #expect(SubChangesRequest(try Self.received(["Profile": "subChanges", "batch": "99999"])).batchSize == 1_000)
        #expect(SubChangesRequest(try Self.received(["Profile": "subChanges", "since": "\"7:2\""])).since == "7:2")
    }
}
