import CJavaScriptCore

// MARK: - SyncFunctionRunner

/// One JavaScriptCore context, in its own context group, holding a compiled sync function: the unit a
/// ``SyncFunctionRunnerPool`` lends to one call at a time.
///
/// The runner owns its handles: the group (whose execution time limit applies to this context alone), the global
/// context and the protected entry point, all released in `deinit`. Arguments and results cross as JSON text
/// (see ``SyncFunctionScript``).
///
/// `@unchecked Sendable`: JavaScriptCore contexts must not be used by two threads at once. A runner is either idle
/// inside its pool or lent to exactly one caller, which the pool's semaphore and mutex guarantee; moving it between
/// threads in that way is allowed (JavaScriptCore takes its API lock on every call).
final class SyncFunctionRunner: @unchecked Sendable {
    /// What one call produced.
    enum Result {
        /// The entry point's JSON output (UTF-8): an array with each call's output, `null` for a call that threw.
        case outputs([UInt8])
        /// A batch of one threw something other than `{forbidden}`/`{unauthorized}`.
        case exception(JavaScriptException)
        /// The call at this index of the batch ran past the time limit, and the batch was terminated.
        case timedOut(call: Int)
        /// The heap grew past the memory limit during the call at this index, and the batch was terminated.
        case memoryExhausted(call: Int)
    }

    private let group: JSContextGroupRef
    private let context: JSGlobalContextRef
    private let entryPoint: JSObjectRef
    /// The object whose `i` the entry point sets to the call it runs, read by the watchdog.
    private let progress: JSObjectRef
    private let watchdog: SyncFunctionWatchdog

    /// Compiles `script` in a new context.
    ///
    /// - Parameters:
    ///   - script: The wrapped sync function.
    ///   - timeLimit: The CPU time limit per call, also applied to the compilation.
    ///   - memoryLimit: The most bytes the context's heap may hold during a call.
    /// - Throws: The exception compiling or evaluating the program raised (a `SyntaxError`, the wrapper's
    ///   `TypeError` when the source is not a function, a time-out).
    init(script: SyncFunctionScript, timeLimit: Duration, memoryLimit: Int) throws(JavaScriptException) {
        guard let group = JSContextGroupCreate() else { throw JavaScriptException(message: "cannot create a context group") }
        let watchdog = SyncFunctionWatchdog(timeLimit: timeLimit, memoryLimit: memoryLimit)
        watchdog.reset()
        watchdog.install(on: group)
        guard let context = JSGlobalContextCreateInGroup(group, nil) else {
            JSContextGroupRelease(group)
            throw JavaScriptException(message: "cannot create a JavaScript context")
        }
        var exception: JSValueRef?
        let value = JavaScriptText.withString(script.text) { JSEvaluateScript(context, $0, nil, nil, 1, &exception) }
        let failure: JavaScriptException? =
            if let exception {
                watchdog.hasFired
                    ? JavaScriptException(message: "evaluating the sync function ran past its time or memory limit")
                    : Self.locate(JavaScriptException(exception, in: context), of: script, in: context)
            } else if let value, JSValueIsObject(context, value), let object = JSValueToObject(context, value, nil),
                JSObjectIsFunction(context, object)
            {
                nil
            } else {
                JavaScriptException(message: "the sync function did not compile to a function")
            }
        guard failure == nil, let value, let object = JSValueToObject(context, value, nil) else {
            JSGlobalContextRelease(context)
            JSContextGroupRelease(group)
            throw failure ?? JavaScriptException(message: "the sync function did not compile to a function")
        }
        let progress = JSObjectMake(context, nil, nil)!
        JSValueProtect(context, object)
        JSValueProtect(context, progress)
        watchdog.watch(progress: progress)
        self.group = group
        self.context = context
        self.entryPoint = object
        self.progress = progress
        self.watchdog = watchdog
    }

    deinit {
        JSValueUnprotect(context, progress)
        JSValueUnprotect(context, entryPoint)
        JSGlobalContextRelease(context)
        JSContextGroupRelease(group)
    }

    // MARK: - Calling

    /// Runs the function for a batch of calls by one user, crossing into JavaScript once.
    ///
    /// - Parameters:
    ///   - calls: A JSON array of `[doc, oldDoc]` pairs (`oldDoc` `null` when there is none), as UTF-8 text.
    ///   - user: The user context as JSON text (see ``SyncFunctionScript``), nil for an admin call.
    func run(calls: [UInt8], user: [UInt8]?) -> Result {
        watchdog.reset()
        let context = context
        let progress = progress
        var exception: JSValueRef?
        // The arguments live in a stack buffer so that JavaScriptCore's conservative stack scan keeps them alive.
        let value: JSValueRef? = withUnsafeTemporaryAllocation(of: JSValueRef?.self, capacity: 3) { arguments in
            arguments.initialize(repeating: nil)
            arguments[0] = Self.parse(calls, in: context)
            arguments[1] = user.flatMap { Self.parse($0, in: context) } ?? JSValueMakeNull(context)
            arguments[2] = progress
            guard arguments[0] != nil else { return nil }
            return JSObjectCallAsFunction(context, entryPoint, nil, 3, arguments.baseAddress, &exception)
        }
        if let exception {
            switch watchdog.stopReason {
            case .timeLimit: return .timedOut(call: watchdog.stoppedCall)
            case .memoryLimit: return .memoryExhausted(call: watchdog.stoppedCall)
            case .none: return .exception(JavaScriptException(exception, in: context))
            }
        }
        guard let value, JSValueIsString(context, value), let text = JSValueToStringCopy(context, value, nil) else {
            return .exception(JavaScriptException(message: "the sync function runtime returned no output"))
        }
        defer { JSStringRelease(text) }
        return .outputs(JavaScriptText.utf8(text))
    }

    // MARK: - Helpers

    /// A syntax error as the source alone produces it, which names the user's line rather than the wrapper's
    /// (e.g. for a stray `}`); `exception` itself for other errors, or when the source alone parses. Nothing of
    /// the source runs: the standalone program starts with `throw 0`.
    private static func locate(
        _ exception: JavaScriptException, of script: SyncFunctionScript, in context: JSContextRef
    ) -> JavaScriptException {
        guard exception.message.hasPrefix("SyntaxError") else { return exception }
        var standaloneException: JSValueRef?
        _ = JavaScriptText.withString(script.standaloneText) {
            JSEvaluateScript(context, $0, nil, nil, 1, &standaloneException)
        }
        guard let standaloneException else { return exception }
        let standalone = JavaScriptException(standaloneException, in: context)
        return standalone.message.hasPrefix("SyntaxError") ? standalone : exception
    }

    private static func parse(_ json: [UInt8], in context: JSContextRef) -> JSValueRef? {
        JavaScriptText.withString(utf8: json) { JSValueMakeFromJSONString(context, $0) }
    }
}
