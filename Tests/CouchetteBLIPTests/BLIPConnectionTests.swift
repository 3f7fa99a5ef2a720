import CouchetteTestSupport
import NIOCore
import Testing

@testable import CouchetteBLIP

/// Requests and responses between two connections joined in memory (blip-sync-protocol.md §2.8–§2.11).
@Suite(.timeLimit(.minutes(3))) struct BLIPConnectionTests {
    /// Echoes a request's body and properties back, `ERR BLIP/404` for profile `missing`.
    static let echo: BLIPConnection.RequestHandler = { request, _ in
        if request.profile == "missing" {
            return request.unhandledReply()
        }
        return request.reply(properties: request.properties, body: request.body, isCompressed: request.isCompressed)
    }

    @Test func requestsBothWaysGetTheirOwnResponses() async throws {
        let pipe = MemoryPipe(client: Self.echo, server: Self.echo)
        var random = SplitMix64(state: 7)
        let bodies = (0..<40).map { index in
            random.bytes([0, 10, 5_000, 70_000, 300_000][index % 5], mask: 0b11)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, body) in bodies.enumerated() {
                let connection = index % 2 == 0 ? pipe.client : pipe.server
                group.addTask {
                    let reply = try await connection.send(
                        properties: ["Profile": "echo", "index": "\(index)"], body: body, urgent: index % 3 == 0,
                        compressed: index % 4 == 0)
                    #expect(reply.type == .response)
                    #expect(reply.properties["index"] == "\(index)")
                    #expect(reply.body == body)
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func unknownOrMissingProfilesGetErrors() async throws {
        let pipe = MemoryPipe(client: Self.echo, server: Self.echo)
        let missing = try await pipe.client.send(properties: ["Profile": "missing"])
        #expect(missing.error?.domain == "BLIP")
        #expect(missing.error?.code == 404)
        let noProfile = try await pipe.client.send(properties: ["client": "cp-1"])
        #expect(noProfile.error?.code == 400)
    }

    @Test func aNoReplyRequestReachesItsHandlerAndGetsNoResponse() async throws {
        let (received, continuation) = AsyncStream.makeStream(of: String.self)
        let pipe = MemoryPipe(client: Self.echo) { request, _ in
            continuation.yield(request.profile ?? "")
            return request.reply()
        }
        try await pipe.client.post(properties: ["Profile": "norev", "id": "doc"])
        // The next request's response proves the connection is in order after the dropped response.
        let reply = try await pipe.client.send(properties: ["Profile": "after"])
        #expect(reply.type == .response)
        var iterator = received.makeAsyncIterator()
        #expect(await iterator.next() == "norev")
        #expect(await iterator.next() == "after")
    }

    @Test func aFatalFramingErrorClosesWithProtocolErrorAndFailsWaitingRequests() async throws {
        let pipe = MemoryPipe(client: Self.echo) { request, _ in
            try? await Task.sleep(for: .seconds(30))  // never answers in time
            return request.reply()
        }
        let waiting = Task { try await pipe.client.send(properties: ["Profile": "slow"]) }
        // A frame with a bad checksum arrives at the server.
        await pipe.injectIntoServer(ByteBuffer(bytes: [9, 0, 0, 0, 0, 0, 0]))
        var closes = pipe.serverCloses.makeAsyncIterator()
        #expect(await closes.next() == 1002)
        #expect(await pipe.server.isClosed)
        await #expect(throws: BLIPError.self) { try await waiting.value }
        await #expect(throws: BLIPError.self) { try await pipe.server.send(properties: ["Profile": "late"]) }
    }

    @Test func requestsQueuedTogetherGetTheirResponsesInOrderWhateverOrderTheyArriveIn() async throws {
        // The first request is answered only after the last one was: its response arrives last.
        let (lastAnswered, signal) = AsyncStream.makeStream(of: Void.self)
        let pipe = MemoryPipe(client: Self.echo) { request, _ in
            switch request.properties["index"] {
            case "0":
                var iterator = lastAnswered.makeAsyncIterator()
                await iterator.next()
            case "4": signal.yield()
            case "2": return request.unhandledReply()
            default: break
            }
            return request.reply(properties: request.properties, body: request.body)
        }
        let requests = (0..<5).map { index in
            (properties: ["Profile": "echo", "index": "\(index)"] as BLIPProperties, body: Array("body \(index)".utf8))
        }
        let numbers = try await pipe.client.queue(requests, compressed: true)
        #expect(numbers == numbers.sorted() && Set(numbers).count == 5)
        let replies = try await pipe.client.responses(to: numbers)
        #expect(replies.map(\.number) == numbers)
        for (index, reply) in replies.enumerated() where index != 2 {
            #expect(reply.type == .response && reply.properties["index"] == "\(index)")
            #expect(reply.body == Array("body \(index)".utf8))
        }
        #expect(replies[2].error?.code == 404)
        // The connection goes on as before; a number given twice is answered twice.
        let again = try await pipe.client.queue([(properties: ["Profile": "echo", "n": "1"], body: [])])
        let twice = try await pipe.client.responses(to: again + again)
        #expect(twice.count == 2 && twice.allSatisfy { $0.properties["n"] == "1" })
    }

    @Test func waitingForQueuedResponsesFailsWhenTheConnectionCloses() async throws {
        let pipe = MemoryPipe(client: Self.echo) { request, _ in
            try? await Task.sleep(for: .seconds(30))  // never answers in time
            return request.reply()
        }
        let numbers = try await pipe.client.queue(
            [(properties: ["Profile": "slow"], body: []), (properties: ["Profile": "slow"], body: [])])
        let waiting = Task { try await pipe.client.responses(to: numbers) }
        await pipe.injectIntoServer(ByteBuffer(bytes: [9, 0, 0, 0, 0, 0, 0]))  // a bad checksum: the server closes
        await #expect(throws: BLIPError.self) { try await waiting.value }
        await #expect(throws: BLIPError.self) {
            try await pipe.client.queue([(properties: ["Profile": "late"], body: [])])
        }
    }
}
