// MARK: - SyncFunctionConsole

/// Where a sync function's `console.log`, `console.info`, `console.warn` and `console.error` lines go.
///
/// The gateway writes them to its log under Sync Gateway's `Javascript` key (``GatewayLog``), as
/// `Javascript: <db>: <text>`; `warn` and `error` lines at warning level, whether or not the key is enabled.
///
/// ```swift
/// let sync = try JavaScriptSyncFunction(source: "function(doc){ console.log('saw', doc._id); }",
///                                       console: SyncFunctionConsole { level, text in print(level, text) })
/// ```
public struct SyncFunctionConsole: Sendable {
    /// Receives each line with its level: `log`, `info`, `warn` or `error`.
    public let write: @Sendable (_ level: String, _ text: String) -> Void

    /// Creates a console.
    public init(_ write: @escaping @Sendable (_ level: String, _ text: String) -> Void) {
        self.write = write
    }

    /// A console that drops every line.
    public static let discard = SyncFunctionConsole { _, _ in }

    /// The gateway's: lines of database `database` go to `log` under ``LogKeys/javascript``.
    static func gateway(_ log: GatewayLog, database: String) -> SyncFunctionConsole {
        SyncFunctionConsole { level, text in
            if level == "warn" || level == "error" {
                log.logger.warning("\(LogKeys.javascript): \(database): \(text)")
            } else {
                log(LogKeys.javascript, "\(database): \(text)")
            }
        }
    }
}
