import Logging
import Synchronization

// MARK: - LogSettings

/// The log keys and level a running gateway uses: set from the configuration (`log`, `logging.default`) and
/// changed at run time by `PUT /_logging`, read by the server's loggers and middleware at each use.
///
/// ```swift
/// let settings = LogSettings(keys: ["HTTP"], level: .info)
/// settings.update(["CRUD": true, "HTTP": false], replace: false)
/// settings.keyNames              // ["CRUD"]
/// settings.isEnabled(LogKeys.http) // false
/// ```
///
/// One instance per server lives in ``DatabaseRegistry/logSettings``.
public final class LogSettings: Sendable {
    // MARK: - State

    private struct State {
        var names: [String]
        var level: Logger.Level
    }

    private let state: Mutex<State>

    // MARK: - Initialisers

    /// Creates settings with the given keys (case-insensitive; the first spelling of each is kept) and level.
    public init(keys: [String] = [], level: Logger.Level = .info) {
        state = Mutex(State(names: Self.unique(keys), level: level))
    }

    /// The settings a configuration asks for: `log` plus `logging.default.logKeys`, and
    /// `logging.default.logLevel` (default `info`).
    public convenience init(config: GatewayConfig) {
        self.init(
            keys: config.log + (config.logging?.logKeys ?? []),
            level: config.logging?.logLevel.flatMap(Self.level(named:)) ?? .info)
    }

    // MARK: - Reading

    /// The enabled key names, as first spelled, in the order they were enabled.
    public var keyNames: [String] {
        state.withLock { $0.names }
    }

    /// The enabled keys, for matching.
    public var keys: LogKeys {
        LogKeys(keyNames)
    }

    /// Whether `key` is enabled (`*` enables all, `KEY+` implies `KEY`).
    public func isEnabled(_ key: String) -> Bool {
        keys.contains(key)
    }

    /// The minimum level logged.
    public var level: Logger.Level {
        state.withLock { $0.level }
    }

    // MARK: - Changing

    /// Enables the keys mapped to `true` and disables those mapped to `false` (`PUT /_logging`).
    ///
    /// - Parameters:
    ///   - changes: Key names (case-insensitive) and whether they should be enabled.
    ///   - replace: Whether to start from no key at all (`?replace=true`), so that only the `true` keys remain.
    public func update(_ changes: [String: Bool], replace: Bool) {
        state.withLock { state in
            var names = replace ? [] : state.names
            for (name, enabled) in changes.sorted(by: { $0.key < $1.key }) {
                names.removeAll { $0.lowercased() == name.lowercased() }
                if enabled { names.append(name) }
            }
            state.names = names
        }
    }

    /// Sets the minimum level.
    public func setLevel(_ level: Logger.Level) {
        state.withLock { $0.level = level }
    }

    // MARK: - Level names

    /// A level from Sync Gateway's names (`trace`, `debug`, `info`, `warn`, `error`, `panic`, `fatal`, `none`) or
    /// swift-log's; `nil` for an unknown name.
    ///
    /// ```swift
    /// LogSettings.level(named: "warn")   // .warning
    /// LogSettings.level(named: "none")   // .critical
    /// ```
    public static func level(named name: String) -> Logger.Level? {
        switch name.lowercased() {
        case "trace": .trace
        case "debug": .debug
        case "info": .info
        case "notice": .notice
        case "warn", "warning": .warning
        case "error": .error
        case "critical", "panic", "fatal", "none": .critical
        default: nil
        }
    }

    /// A level from Sync Gateway 1.x's numeric `?level=` (1 debug, 2 info, 3 warn); `nil` outside 1…3.
    public static func level(number: Int) -> Logger.Level? {
        switch number {
        case 1: .debug
        case 2: .info
        case 3: .warning
        default: nil
        }
    }

    /// The Sync Gateway name of a level: `debug`, `info`, `warn`, ….
    public static func name(of level: Logger.Level) -> String {
        switch level {
        case .trace: "trace"
        case .debug: "debug"
        case .info, .notice: "info"
        case .warning: "warn"
        case .error: "error"
        case .critical: "fatal"
        }
    }

    /// `keys` without case-insensitive duplicates, keeping the first spelling.
    private static func unique(_ keys: [String]) -> [String] {
        var seen: Set<String> = []
        return keys.filter { seen.insert($0.lowercased()).inserted }
    }
}
