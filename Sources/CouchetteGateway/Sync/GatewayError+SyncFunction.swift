// MARK: - Sync function errors

extension GatewayError {
    /// 500 `Exception in JS sync function`: the function threw something other than `{forbidden}` or
    /// `{unauthorized}`, or called a built-in with a value Sync Gateway refuses (a channel name with a comma, a
    /// role without the `role:` prefix). Sync Gateway's wording (spec: sync-function.md §4).
    public static let syncFunctionException = GatewayError.internalError("Exception in JS sync function")

    /// 500 `Error in JS sync function`: `access()` or `role()` named an invalid user or role
    /// (spec: sync-function.md §4, §6).
    public static let syncFunctionError = GatewayError.internalError("Error in JS sync function")

    /// 500 `JS sync function timed out`: the call ran past the function's time limit (spec: sync-function.md §4).
    public static let syncFunctionTimedOut = GatewayError.internalError("JS sync function timed out")

    /// 500 `JS sync function exceeded its memory limit`: the call grew its JavaScript heap past the function's
    /// memory limit.
    public static let syncFunctionOutOfMemory = GatewayError.internalError("JS sync function exceeded its memory limit")

    /// 400 `Invalid sync function: <problem>`: the source does not compile or is not a function.
    ///
    /// ```swift
    /// GatewayError.invalidSyncFunction("SyntaxError: Unexpected token '}' (line 12)").reason
    /// // "Invalid sync function: SyntaxError: Unexpected token '}' (line 12)"
    /// ```
    public static func invalidSyncFunction(_ problem: String) -> GatewayError {
        .badRequest("Invalid sync function: \(problem)")
    }
}
