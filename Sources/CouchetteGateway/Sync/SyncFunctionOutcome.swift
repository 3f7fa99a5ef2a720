// MARK: - SyncFunctionOutcome

/// What one sync function call decided, with the detail a log needs when it failed
/// (spec: sync-function.md §3–§4).
///
/// ```swift
/// switch syncFunction.evaluate(document: doc, oldDocument: nil, user: user) {
/// case .routed(let result): save(doc, channels: result.channels)
/// case .rejected(let error): respond(error)                      // 403 "wrong user"
/// case .failed(let error, let detail): log(detail); respond(error)  // 500 "Exception in JS sync function"
/// }
/// ```
public enum SyncFunctionOutcome: Sendable, Equatable {
    /// The revision is accepted, with its channels, grants and expiry.
    case routed(RoutingResult)
    /// The function refused the revision: `throw({forbidden})` or a failed `require*` (403),
    /// `throw({unauthorized})` (401), or `reject(status, message)`.
    case rejected(GatewayError)
    /// The function failed: an exception, a time-out, or a built-in called with a value Sync Gateway refuses
    /// (500). `detail` says what happened (e.g. `ReferenceError: Can't find variable: foo (line 3)`); it may
    /// quote document content, so it belongs in logs, never in a response to a client.
    case failed(GatewayError, detail: String)

    /// The routing result, or the error to answer with.
    public var result: Result<RoutingResult, GatewayError> {
        switch self {
        case .routed(let result): .success(result)
        case .rejected(let error), .failed(let error, _): .failure(error)
        }
    }
}
