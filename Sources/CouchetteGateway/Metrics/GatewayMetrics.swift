import CouchetteCore
import Prometheus

// MARK: - GatewayMetrics

/// The gateway's counters, served as Go-style expvars by `GET /_expvar` and in the Prometheus text format by
/// `GET /metrics` (spec: gateway-rest-api.md §3).
///
/// Process-wide, like Sync Gateway's expvars: every server in the process counts into ``shared``. Code that
/// serves requests reports events through the methods below:
///
/// ```swift
/// GatewayMetrics.shared.changesFeedOpened()
/// defer { GatewayMetrics.shared.changesFeedClosed() }
/// GatewayMetrics.shared.documentsRead(docs.count)   // _bulk_get, _all_docs?include_docs
/// GatewayMetrics.shared.revisionsAdded(saved)       // _bulk_docs
/// ```
///
/// `MetricsMiddleware` counts requests and the single-document reads and writes of `/{db}/{doc}` itself.
public final class GatewayMetrics: Sendable {
    // MARK: - Shared instance

    /// The metrics of this process.
    public static let shared = GatewayMetrics()

    // MARK: - Properties

    /// The Prometheus registry holding every metric, for `/metrics`.
    public let prometheus: PrometheusCollectorRegistry

    private let publicRequests: TrackedCounter
    private let adminRequests: TrackedCounter
    private let publicRequestsActive: TrackedGauge
    private let adminRequestsActive: TrackedGauge
    private let changesFeeds: TrackedCounter
    private let changesFeedsActive: TrackedGauge
    private let documentGets: TrackedCounter
    private let revsAdded: TrackedCounter
    private let docsPurged: TrackedCounter
    private let revsCompacted: TrackedCounter
    private let principalUpdates: TrackedCounter
    private let sessionsCreated: TrackedCounter

    // MARK: - Initialiser

    /// Creates a set of metrics in a new Prometheus registry (tests; servers use ``shared``).
    public init() {
        let registry = PrometheusCollectorRegistry()
        prometheus = registry
        func counter(_ name: String, _ help: String, labels: [(String, String)] = []) -> TrackedCounter {
            TrackedCounter(registry: registry, name: "couchette_\(name)", labels: labels, help: help)
        }
        func gauge(_ name: String, _ help: String, labels: [(String, String)] = []) -> TrackedGauge {
            TrackedGauge(registry: registry, name: "couchette_\(name)", labels: labels, help: help)
        }
        publicRequests = counter("http_requests_total", "HTTP requests received", labels: [("listener", "public")])
        adminRequests = counter("http_requests_total", "HTTP requests received", labels: [("listener", "admin")])
        publicRequestsActive = gauge(
            "http_requests_active", "HTTP requests being handled", labels: [("listener", "public")])
        adminRequestsActive = gauge(
            "http_requests_active", "HTTP requests being handled", labels: [("listener", "admin")])
        changesFeeds = counter("changes_feeds_total", "_changes feeds opened")
        changesFeedsActive = gauge("changes_feeds_active", "_changes feeds open")
        documentGets = counter("document_gets_total", "Documents read")
        revsAdded = counter("revs_added_total", "Revisions written")
        docsPurged = counter("docs_purged_total", "Documents purged")
        revsCompacted = counter("revs_compacted_total", "Revision bodies removed by compaction")
        principalUpdates = counter("principal_updates_total", "User and role changes")
        sessionsCreated = counter("sessions_created_total", "Login sessions created")
    }

    // MARK: - Requests

    /// A request arrived on `listener` (``MetricsMiddleware`` calls this).
    public func requestStarted(on listener: GatewayListener) {
        switch listener {
        case .public:
            publicRequests.increment()
            publicRequestsActive.increment()
        case .admin:
            adminRequests.increment()
            adminRequestsActive.increment()
        }
    }

    /// A request on `listener` was answered (its response head produced).
    public func requestFinished(on listener: GatewayListener) {
        switch listener {
        case .public: publicRequestsActive.decrement()
        case .admin: adminRequestsActive.decrement()
        }
    }

    // MARK: - Changes feeds

    /// A `_changes` feed started; call ``changesFeedClosed()`` exactly once when it ends.
    public func changesFeedOpened() {
        changesFeeds.increment()
        changesFeedsActive.increment()
    }

    /// A `_changes` feed ended (normally, by timeout, by the database going offline or by disconnection).
    public func changesFeedClosed() {
        changesFeedsActive.decrement()
    }

    // MARK: - Database events

    /// Documents (or revisions) were read for a client.
    public func documentsRead(_ count: Int = 1) {
        documentGets.increment(by: count)
    }

    /// Revisions were written (new edits, replicated revisions, tombstones).
    public func revisionsAdded(_ count: Int = 1) {
        revsAdded.increment(by: count)
    }

    /// Documents were purged.
    public func documentsPurged(_ count: Int) {
        docsPurged.increment(by: count)
    }

    /// Compaction removed revision bodies.
    public func revisionsCompacted(_ count: Int) {
        revsCompacted.increment(by: count)
    }

    /// A user or role was created, changed or deleted.
    public func principalUpdated() {
        principalUpdates.increment()
    }

    /// A login session was created.
    public func sessionCreated() {
        sessionsCreated.increment()
    }

    // MARK: - Reports

    /// The current values as `GET /_expvar` serves them:
    ///
    /// ```json
    /// {"cmdline":["couchette-gateway","config.json"],
    ///  "syncGateway_stats":{"requests_total":12,"requests_active":1,"changesFeeds_total":2,"changesFeeds_active":0},
    ///  "syncGateway_db":{"document_gets":4,"revs_added":3,"docs_purged":0,"revs_compacted":0,
    ///                    "principal_updates":1,"sessions_created":0},
    ///  "syncGateway_rest":{"requests_public":8,"requests_admin":4,"requests_active_public":0,"requests_active_admin":1}}
    /// ```
    public var expvar: JSONValue {
        func number(_ value: Int) -> JSONValue { .int(Int64(value)) }
        return .object([
            "cmdline": .array(CommandLine.arguments.map { .string($0) }),
            "syncGateway_stats": .object([
                "requests_total": number(publicRequests.value + adminRequests.value),
                "requests_active": number(publicRequestsActive.value + adminRequestsActive.value),
                "changesFeeds_total": number(changesFeeds.value),
                "changesFeeds_active": number(changesFeedsActive.value),
            ]),
            "syncGateway_db": .object([
                "document_gets": number(documentGets.value),
                "revs_added": number(revsAdded.value),
                "docs_purged": number(docsPurged.value),
                "revs_compacted": number(revsCompacted.value),
                "principal_updates": number(principalUpdates.value),
                "sessions_created": number(sessionsCreated.value),
            ]),
            "syncGateway_rest": .object([
                "requests_public": number(publicRequests.value),
                "requests_admin": number(adminRequests.value),
                "requests_active_public": number(publicRequestsActive.value),
                "requests_active_admin": number(adminRequestsActive.value),
            ]),
        ])
    }

    /// Every metric in the Prometheus text exposition format (version 0.0.4).
    public func prometheusText() -> String {
        prometheus.emitToString()
    }
}
