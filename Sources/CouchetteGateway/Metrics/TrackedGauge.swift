import Prometheus
import Synchronization

// MARK: - TrackedGauge

/// A count that goes up and down (requests or feeds in flight), kept both as a readable atomic value (for
/// `_expvar`) and as a Prometheus gauge (for `/metrics`).
///
/// ```swift
/// let active = TrackedGauge(registry: registry, name: "couchette_changes_feeds_active", help: "Open feeds")
/// active.increment()
/// active.decrement()
/// active.value   // 0
/// ```
final class TrackedGauge: Sendable {
    // MARK: - Properties

    private let current = Atomic<Int>(0)
    private let gauge: Prometheus.Gauge

    // MARK: - Initialiser

    /// Creates the gauge and registers it in `registry` under `name` with optional `labels`.
    init(registry: PrometheusCollectorRegistry, name: String, labels: [(String, String)] = [], help: String) {
        gauge = registry.makeGauge(
            descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    // MARK: - Operations

    /// Adds one.
    func increment() {
        current.add(1, ordering: .relaxed)
        gauge.increment()
    }

    /// Removes one.
    func decrement() {
        current.subtract(1, ordering: .relaxed)
        gauge.decrement()
    }

    /// The current value.
    var value: Int {
        current.load(ordering: .relaxed)
    }
}
