import CouchetteCore
import Foundation
import Hummingbird
import Testing

@testable import CouchetteGateway

// MARK: - MetricsTests

/// `_expvar`, Prometheus `/metrics`, and the counters behind them. The shared metrics count every server of the
/// test process, so HTTP tests compare before and after with `>=`.
@Suite("Metrics", .timeLimit(.minutes(5)))
struct MetricsTests {
    typealias Fixture = AdminGatewayFixture

    /// One value of `syncGateway_<group>` in an `_expvar` body.
    private func expvar(_ body: JSONValue, _ group: String, _ key: String) throws -> Int64 {
        try #require(body["syncGateway_\(group)"]?[key]?.intValue)
    }

    @Test("_expvar counts requests, document reads and writes")
    func expvarOverHTTP() async throws {
        try await Fixture.run { client, ports, _ in
            let admin = ports.adminPort
            let before = try await client.send(port: admin, path: "/_expvar").jsonValue()
            #expect(try expvar(before, "stats", "requests_active") >= 1)
            #expect(before["cmdline"]?.arrayValue != nil)

            #expect(try await client.send("PUT", port: admin, path: "/todo/doc", json: ["a": 1]).status == 201)
            #expect(try await client.send(port: admin, path: "/todo/doc").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/doc").status == 200)
            #expect(try await client.send(port: admin, path: "/todo/missing").status == 404)

            let after = try await client.send(port: admin, path: "/_expvar").jsonValue()
            #expect(try expvar(after, "stats", "requests_total") >= expvar(before, "stats", "requests_total") + 5)
            #expect(try expvar(after, "db", "document_gets") >= expvar(before, "db", "document_gets") + 2)
            #expect(try expvar(after, "db", "revs_added") >= expvar(before, "db", "revs_added") + 1)
            for key in ["changesFeeds_total", "changesFeeds_active"] {
                #expect(after["syncGateway_stats"]?[key]?.intValue != nil)
            }
        }
    }

    @Test("/metrics serves the Prometheus text format")
    func prometheusOverHTTP() async throws {
        try await Fixture.run { client, ports, _ in
            #expect(try await client.send(port: ports.publicPort, path: "/").status == 200)
            let reply = try await client.send(port: ports.adminPort, path: "/metrics")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = reply.text
            #expect(text.contains("# TYPE couchette_http_requests_total counter"))
            #expect(text.contains(#"couchette_http_requests_total{listener="public"}"#))
            #expect(text.contains(#"couchette_http_requests_active{listener="admin"} "#))
            #expect(text.contains("# TYPE couchette_changes_feeds_active gauge"))
            #expect(text.contains("couchette_document_gets_total "))
        }
    }

    @Test("Counters and gauges of a fresh metrics set")
    func freshMetrics() {
        let metrics = GatewayMetrics()
        metrics.requestStarted(on: .public)
        metrics.requestStarted(on: .admin)
        metrics.requestFinished(on: .public)
        metrics.changesFeedOpened()
        metrics.changesFeedOpened()
        metrics.changesFeedClosed()
        metrics.documentsRead(3)
        metrics.revisionsAdded()
        metrics.documentsPurged(2)
        metrics.revisionsCompacted(0)
        metrics.principalUpdated()
        metrics.sessionCreated()
        let expvar = metrics.expvar
        #expect(
            expvar["syncGateway_stats"]
                == ["requests_total": 2, "requests_active": 1, "changesFeeds_total": 2, "changesFeeds_active": 1])
        #expect(
            expvar["syncGateway_db"]
                == [
                    "document_gets": 3, "revs_added": 1, "docs_purged": 2, "revs_compacted": 0, "principal_updates": 1,
                    "sessions_created": 1,
                ])
        #expect(expvar["syncGateway_rest"]?["requests_admin"] == 1)
        let text = metrics.prometheusText()
        #expect(text.contains("couchette_changes_feeds_total 2"))
        #expect(text.contains("couchette_changes_feeds_active 1"))
        #expect(text.contains(#"couchette_http_requests_active{listener="admin"} 1"#))
    }

    @Test(
        "Single-document events are told from method, path and status",
        arguments: [
            ("GET", "/todo/doc1", 200, CouchetteGateway.MetricsMiddleware.DocumentEvent.read),
            ("GET", "/todo/doc1", 404, nil),
            ("GET", "/todo/_all_docs", 200, nil),
            ("GET", "/todo/doc1/att.txt", 200, nil),
            ("PUT", "/todo/doc1", 201, .write),
            ("PUT", "/todo/doc1/att.txt", 201, .write),
            ("PUT", "/todo/_local/x", 201, nil),
            ("DELETE", "/todo/doc1", 200, .write),
            ("POST", "/todo/", 200, .write),
            ("POST", "/todo/_bulk_docs", 201, nil),
            ("PUT", "/todo/", 201, nil),
        ] as [(String, String, Int, CouchetteGateway.MetricsMiddleware.DocumentEvent?)]
    )
    func classification(
        method: String, path: String, status: Int, event: CouchetteGateway.MetricsMiddleware.DocumentEvent?
    ) throws {
        let method = try #require(HTTPRequest.Method(rawValue: method))
        #expect(CouchetteGateway.MetricsMiddleware.documentEvent(method: method, path: path, status: status) == event)
    }
}
