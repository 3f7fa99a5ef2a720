import CouchetteCore
import Testing

@testable import CouchetteGateway

// MARK: - Options

extension ChangesTests {
    /// Parameter parsing (gateway-rest-api.md §11.1).
    @Suite("_changes options", .timeLimit(.minutes(5)))
    struct Options {
        @Test("Defaults: normal feed from 0, no limit, 300 s timeout, no heartbeat")
        func defaults() throws {
            let options = try ChangesOptions(parameters: [:])
            #expect(options == ChangesOptions())
            #expect(options.feed == .normal)
            #expect(options.since == 0)
            #expect(options.limit == nil)
            #expect(options.timeout == .milliseconds(300_000))
            #expect(options.heartbeat == nil)
            #expect(options.filter == .none)
        }

        @Test(
            "since: N, N:S (backfill position), L::N and L:N:S (the low-water mark L is ignored)",
            arguments: [
                ("12", ChangeSequence(12)), ("5:12", ChangeSequence(12, triggeredBy: 5)), ("3::12", ChangeSequence(12)),
                ("3:5:2", ChangeSequence(2, triggeredBy: 5)), ("", ChangeSequence(0)), (" 7 ", ChangeSequence(7)),
            ] as [(String, ChangeSequence)])
        func sinceGrammar(text: String, expected: ChangeSequence) throws {
            #expect(try ChangeSequence.parse(text) == expected)
            #expect(try ChangesOptions(parameters: ["since": text]).since == expected)
        }

        @Test("since=now is the current sequence given; descending and seq_interval are read (CouchDB)")
        func sinceNowDescendingAndInterval() throws {
            #expect(try ChangesOptions(parameters: ["since": "now"], currentSequence: 42).since == 42)
            let options = try ChangesOptions(parameters: ["descending": "true", "seq_interval": "3"])
            #expect(options.descending && options.sequenceInterval == 3)
            #expect(try ChangesOptions(parameters: ["seq_interval": "0"]).sequenceInterval == nil)
            #expect(throws: GatewayError.badRequest("descending=true needs feed=normal")) {
                try ChangesOptions(parameters: ["descending": "true", "feed": "continuous"])
            }
        }

        @Test("A backfill position reads back as N:S, a JSON string; a plain one as a number")
        func sequenceForms() {
            let backfill = ChangeSequence(3, triggeredBy: 9)
            #expect(backfill.description == "9:3" && backfill.jsonValue == "9:3" && backfill.normalPosition == 9)
            #expect(ChangeSequence(4).description == "4" && ChangeSequence(4).jsonValue == 4)
            #expect(ChangeSequence(4).normalPosition == 4 && !ChangeSequence(4).isBackfill)
        }

        @Test("A bad since is 400 Invalid sequence", arguments: ["x", "-1", "1:", ":1", "1:2:3:4", "1.5", "a:2"])
        func badSince(text: String) {
            #expect(throws: GatewayError.badRequest("Invalid sequence")) {
                try ChangesOptions(parameters: ["since": text])
            }
        }

        @Test("feed accepts the four types; others are 400 Unknown feed type")
        func feedTypes() throws {
            for feed in ChangesFeedType.allCases {
                #expect(try ChangesOptions(parameters: ["feed": feed.rawValue]).feed == feed)
            }
            #expect(throws: GatewayError.badRequest("Unknown feed type")) {
                try ChangesOptions(parameters: ["feed": "eventsource"])
            }
        }

        @Test("style, include_docs, active_only and limit (0 meaning none)")
        func flags() throws {
            let options = try ChangesOptions(parameters: [
                "style": "all_docs", "include_docs": "true", "active_only": "true", "limit": "5",
            ])
            #expect(options.includeAllLeaves && options.includeDocs && options.activeOnly)
            #expect(options.limit == 5)
            #expect(try ChangesOptions(parameters: ["limit": "0"]).limit == nil)
            #expect(try !ChangesOptions(parameters: ["style": "main_only"]).includeAllLeaves)
            #expect(throws: GatewayError.self) { try ChangesOptions(parameters: ["limit": "-2"]) }
            #expect(throws: GatewayError.self) { try ChangesOptions(parameters: ["include_docs": "maybe"]) }
        }

        @Test("bychannel needs a non-empty channels list")
        func byChannel() throws {
            let options = try ChangesOptions(parameters: ["filter": "sync_gateway/bychannel", "channels": "a, b,,c"])
            #expect(options.filter == .channels(["a", "b", "c"]))
            #expect(throws: GatewayError.badRequest("Missing 'channels' filter parameter")) {
                try ChangesOptions(parameters: ["filter": "sync_gateway/bychannel"])
            }
            #expect(throws: GatewayError.badRequest("Empty channel list")) {
                try ChangesOptions(parameters: ["filter": "sync_gateway/bychannel", "channels": " , "])
            }
        }

        @Test("_doc_ids takes a JSON array or a comma list, on any feed")
        func documentIDs() throws {
            let json = try ChangesOptions(parameters: ["filter": "_doc_ids", "doc_ids": #"["a","b,c"]"#])
            #expect(json.filter == .documentIDs(["a", "b,c"]))
            let list = try ChangesOptions(parameters: ["filter": "_doc_ids", "doc_ids": "a,b"])
            #expect(list.filter == .documentIDs(["a", "b"]))
            let longpoll = try ChangesOptions(parameters: ["filter": "_doc_ids", "doc_ids": "a", "feed": "longpoll"])
            #expect(longpoll.filter == .documentIDs(["a"]))
            #expect(throws: GatewayError.self) { try ChangesOptions(parameters: ["filter": "_doc_ids"]) }
            #expect(throws: GatewayError.self) {
                try ChangesOptions(parameters: ["filter": "_doc_ids", "doc_ids": #"["a", 1]"#])
            }
        }

        @Test("Other filters are 400 Unknown filter")
        func unknownFilter() {
            #expect(throws: GatewayError.badRequest("Unknown filter; try sync_gateway/bychannel or _doc_ids")) {
                try ChangesOptions(parameters: ["filter": "app/mine"])
            }
        }

        @Test("Heartbeats below 25 s are raised to it, capped by MaxHeartbeat; a heartbeat disables the timeout")
        func heartbeat() throws {
            #expect(try ChangesOptions(parameters: ["heartbeat": "1000"]).heartbeat == .seconds(25))
            #expect(try ChangesOptions(parameters: ["heartbeat": "60000"]).heartbeat == .seconds(60))
            #expect(try ChangesOptions(parameters: ["heartbeat": "0"]).heartbeat == nil)
            let capped = ChangesOptions.Limits(maximumHeartbeat: .seconds(30))
            #expect(try ChangesOptions(parameters: ["heartbeat": "60000"], limits: capped).heartbeat == .seconds(30))
            let lowered = ChangesOptions.Limits(minimumHeartbeat: .milliseconds(10))
            #expect(try ChangesOptions(parameters: ["heartbeat": "20"], limits: lowered).heartbeat == .milliseconds(20))
            let options = try ChangesOptions(parameters: ["heartbeat": "30000", "timeout": "1000"])
            #expect(options.timeout == nil)
        }

        @Test("timeout is capped at 900 s; 0 means none")
        func timeout() throws {
            #expect(try ChangesOptions(parameters: ["timeout": "1000"]).timeout == .seconds(1))
            #expect(try ChangesOptions(parameters: ["timeout": "2000000"]).timeout == .seconds(900))
            #expect(try ChangesOptions(parameters: ["timeout": "0"]).timeout == nil)
        }

        @Test("POST body values become parameters; channels arrays are joined, doc_ids arrays stay JSON")
        func bodyParameters() throws {
            let parameters = ChangesOptions.parameters(fromBody: [
                "since": 12, "limit": 3, "include_docs": true, "channels": ["a", "b"], "doc_ids": ["x"],
                "filter": "sync_gateway/bychannel", "style": .null,
            ])
            #expect(parameters["since"] == "12")
            #expect(parameters["limit"] == "3")
            #expect(parameters["include_docs"] == "true")
            #expect(parameters["channels"] == "a,b")
            #expect(parameters["doc_ids"] == #"["x"]"#)
            #expect(parameters["style"] == nil)
            let options = try ChangesOptions(parameters: parameters)
            #expect(options.since == 12 && options.limit == 3 && options.includeDocs)
            #expect(options.filter == .channels(["a", "b"]))
        }
    }
}
