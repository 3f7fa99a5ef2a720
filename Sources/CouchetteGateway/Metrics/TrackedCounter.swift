import Prometheus
import Synchronization

// MARK: - TrackedCounter

/// A count that only grows, kept both as a readable atomic value (for `_expvar`) and as a Prometheus counter
/// (for `/metrics`).
///
/// ```swift
/// let gets = TrackedCounter(registry: registry, name: "couchette_document_gets_total", help: "Documents read")
/// gets.increment()
/// gets.value   // 1
/// ```
final class TrackedCounter: Sendable {
    // MARK: - Properties

    private let current = Atomic<Int>(0)
    private let counter: Prometheus.Counter

    // MARK: - Initialiser

    /// Creates the counter and registers it in `registry` under `name` with optional `labels`.
    init(registry: PrometheusCollectorRegistry, name: String, labels: [(String, String)] = [], help: String) {
        counter = registry.makeCounter(
            descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    // MARK: - Operations

    /// Adds `amount` (non-negative).
    func increment(by amount: Int = 1) {
        guard amount > 0 else { return }
        current.add(amount, ordering: .relaxed)
        counter.increment(by: Int64(amount))
    }

    /// The count so far.
    var value: Int {
        current.load(ordering: .relaxed)
    }
}
