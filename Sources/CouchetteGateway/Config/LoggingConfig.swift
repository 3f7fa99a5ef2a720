// MARK: - LoggingConfig

/// The Sync Gateway 1.4 `logging` key: `{"default": {"logFilePath", "logKeys", "logLevel", "rotation"}}`.
///
/// Only the `default` appender is read; `rotation` is accepted and ignored. Spec: gateway-rest-api.md §17.1.
public struct LoggingConfig: Sendable, Equatable {
    // MARK: - Properties

    /// The log file path (`logFilePath`); `nil` logs to standard error.
    public var logFilePath: String?

    /// Log keys to enable (`logKeys`), merged with the top-level `log` array.
    public var logKeys: [String]

    /// The minimum level (`logLevel`: `"debug"`, `"info"`, `"warn"`, `"error"`, …).
    public var logLevel: String?

    // MARK: - Initialiser

    /// Creates a logging configuration.
    public init(logFilePath: String? = nil, logKeys: [String] = [], logLevel: String? = nil) {
        self.logFilePath = logFilePath
        self.logKeys = logKeys
        self.logLevel = logLevel
    }

    // MARK: - Parsing

    static let knownAppenderKeys: Set<String> = [
        "logFilePath", "logKeys", "logLevel", "rotation", "collation_buffer_size",
    ]

    /// Reads the `logging` object.
    init(object: ConfigObject, warnings: inout [String]) throws(GatewayError) {
        guard let appender = try object.object("default") else {
            self.init()
            return
        }
        self.init(
            logFilePath: try appender.string("logFilePath"),
            logKeys: try appender.stringArray("logKeys") ?? [],
            logLevel: try appender.string("logLevel")
        )
        for key in appender.unknownKeys(known: Self.knownAppenderKeys) {
            warnings.append("\(appender.fieldPath(key)): unknown key ignored")
        }
    }
}
