// MARK: - SyncFunctionLoader

/// Turns a configuration's `sync` source into the router that runs it.
enum SyncFunctionLoader {
    /// The router for `source`: the built-in ``PropertyChannelRouter`` when there is none (it does what the default
    /// `function(doc){channel(doc.channels);}` does, without JavaScript), else the compiled JavaScript function.
    ///
    /// - Parameter console: Where the function's `console` lines go.
    /// - Throws: 400 naming the line when the source does not compile.
    static func router(for source: String?, console: SyncFunctionConsole = .discard) throws(GatewayError)
        -> any ChannelRouter
    {
        guard let source, !source.trimmingWhitespace().isEmpty else { return PropertyChannelRouter() }
        return try JavaScriptSyncFunction(source: source, console: console)
    }
}
