import CouchetteBLIP

// MARK: - ConnectionLimits + configuration keys

extension ConnectionLimits {
    /// The configuration keys of the timeouts (Sync Gateway's names, in seconds), with the key paths they set.
    static let timeoutKeys: [(key: String, path: any WritableKeyPath<ConnectionLimits, Duration> & Sendable)] = [
        ("ServerReadTimeout", \.readTimeout), ("ServerWriteTimeout", \.writeTimeout),
        ("ServerIdleTimeout", \.idleTimeout), ("ServerShutdownTimeout", \.shutdownTimeout),
    ]
}
