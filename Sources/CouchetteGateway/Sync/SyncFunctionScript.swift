// MARK: - SyncFunctionScript

/// The program a JavaScriptCore context evaluates once to compile a sync function: the user's function expression
/// inside a closure that defines the built-ins and returns the per-call entry point (spec: sync-function.md §2–§3).
///
/// Everything before the user's source sits on its first line, so line numbers in syntax errors and exceptions are
/// the user's own. The source lands in `var fn = SOURCE\n;`, as in Sync Gateway's `var v = %s;`: a trailing
/// semicolon or comment is fine, and helper functions declared after the function expression are visible to it.
///
/// The entry point takes a batch of calls for one user, `(calls, userContext, progress)` — `calls` an array of
/// `[doc, oldDoc]` pairs, the user context `{name, roles: [role…], channels: [channel…]}` or `null` for admin
/// calls, `progress` an object whose `i` the entry point sets to the index of the call it runs — and returns an
/// array of the invocations' outputs as JSON text, each one an array (positional, which decodes faster than an
/// object) of the channels, access calls, role calls, expiries, rejection and console lines:
///
/// ```json
/// [["a"], [[["user1"], ["a"]]], [[["user1"], ["role:moderator"]]], [3600], [403, "wrong user"], [["log", "hi"]]]
/// ```
///
/// A batch crosses the JavaScriptCore boundary once (one JSON text in, one out): most of a call's cost when the
/// function itself is short.
///
/// `console.log`/`info`/`warn`/`error` lines are kept as `[level, text]` pairs in `logs` (at most 100 a call, each
/// cut at 1,000 characters; non-string arguments as JSON). `access` and `role` calls are kept as `[names, values]` pairs (strings only, nulls dropped); `expiry` keeps each
/// number or string passed (the last valid one wins); `reject` is the first `reject(status ≥ 400, message)` or
/// `null`. Thrown `{forbidden}` and `{unauthorized}` objects become `reject(403|401, message)`; any other
/// exception makes the call's output `null` (in a batch of one, it leaves the entry point). Validation of names happens in Swift (``SyncFunctionOutput``).
struct SyncFunctionScript: Sendable {
    /// The program to evaluate; its value is the entry point.
    let text: String
    /// The source alone in a `var` statement after a `throw`, to locate syntax errors without running anything:
    /// a stray `}` in the source would otherwise close the wrapper's function and be reported in the wrapper's
    /// code. (`JSCheckScriptSyntax` reports every error as `Parser error`, so this one is evaluated.)
    let standaloneText: String
    /// How many lines the user's source spans.
    let sourceLineCount: Int

    /// Wraps a sync function's source.
    ///
    /// - Parameter source: A function expression, e.g. `function(doc, oldDoc){ channel(doc.channels); }`.
    init(source: String) {
        text = Self.prefix + source + "\n;" + Self.suffix
        standaloneText = "throw 0; var __couchette_syncFunction =" + source + "\n;"
        sourceLineCount = source.reduce(1) { count, character in character.isNewline ? count + 1 : count }
    }

    /// A reported line clamped to the user's source (errors at the end of the input point past its last line).
    func sourceLine(_ line: Int) -> Int {
        min(max(line, 1), sourceLineCount)
    }

    // MARK: - The wrapper

    /// The built-ins, on one line. Internal names start with `__couchette_` so they do not hide user globals.
    private static let prefix = """
        (function () { \
        var __couchette_isArray = Array.isArray, __couchette_stringify = JSON.stringify, \
        __couchette_String = String, __couchette_Number = Number, __couchette_floor = Math.floor; \
        var __couchette_out = null, __couchette_user = null; \
        function __couchette_strings(value, into) { \
        if (typeof value === "string") { into.push(value); } \
        else if (__couchette_isArray(value)) { \
        for (var i = 0; i < value.length; i++) { if (typeof value[i] === "string") { into.push(value[i]); } } } \
        return into; } \
        function __couchette_list(value) { return __couchette_isArray(value) ? value : [value]; } \
        function __couchette_holds(held, names, stripRolePrefix) { \
        for (var i = 0; i < names.length; i++) { var name = names[i]; \
        if (typeof name !== "string") { continue; } \
        if (stripRolePrefix && name.substring(0, 5) === "role:") { name = name.substring(5); } \
        for (var j = 0; j < held.length; j++) { if (held[j] === name) { return true; } } } \
        return false; } \
        function __couchette_reject(status, message) { \
        var out = __couchette_out; if (out === null || out.reject !== null) { return; } \
        var code = __couchette_Number(status); \
        if (code >= 400 && code < 600) { \
        out.reject = [__couchette_floor(code), arguments.length > 1 ? __couchette_String(message) : ""]; } } \
        function channel() { \
        var out = __couchette_out; if (out === null) { return; } \
        for (var i = 0; i < arguments.length; i++) { __couchette_strings(arguments[i], out.channels); } } \
        function access(principals, channels) { \
        var out = __couchette_out; if (out === null) { return; } \
        var names = __couchette_strings(principals, []); \
        if (names.length > 0) { out.access.push([names, __couchette_strings(channels, [])]); } } \
        function role(users, roles) { \
        var out = __couchette_out; if (out === null) { return; } \
        var names = __couchette_strings(users, []); \
        if (names.length > 0) { out.roles.push([names, __couchette_strings(roles, [])]); } } \
        function expiry(value) { \
        var out = __couchette_out; if (out === null) { return; } \
        if (typeof value === "number" || typeof value === "string") { out.expiry.push(value); } } \
        function reject(status, message) { \
        if (arguments.length > 1) { __couchette_reject(status, message); } else { __couchette_reject(status); } } \
        function requireUser(names) { \
        var user = __couchette_user; if (user === null) { return; } \
        names = __couchette_list(names); \
        for (var i = 0; i < names.length; i++) { if (names[i] === user.name) { return; } } \
        throw({forbidden: "wrong user"}); } \
        function requireRole(roles) { \
        var user = __couchette_user; if (user === null) { return; } \
        if (!__couchette_holds(user.roles, __couchette_list(roles), true)) { throw({forbidden: "missing role"}); } } \
        function requireAccess(channels) { \
        var user = __couchette_user; if (user === null) { return; } \
        if (!__couchette_holds(user.channels, __couchette_list(channels), false)) { \
        throw({forbidden: "missing channel access"}); } } \
        function requireAdmin() { if (__couchette_user !== null) { throw({forbidden: "admin required"}); } } \
        function __couchette_console(level, args) { \
        var out = __couchette_out; if (out === null || out.logs.length >= 100) { return; } \
        var parts = []; \
        for (var i = 0; i < args.length; i++) { var value = args[i], text; \
        if (typeof value === "string") { text = value; } \
        else { try { text = __couchette_stringify(value); } catch (e) { text = undefined; } \
        if (text === undefined) { text = __couchette_String(value); } } \
        parts.push(text); } \
        var line = parts.join(" "); \
        out.logs.push([level, line.length > 1000 ? line.substring(0, 1000) + "…" : line]); } \
        var console = { \
        log: function () { __couchette_console("log", arguments); }, \
        info: function () { __couchette_console("info", arguments); }, \
        warn: function () { __couchette_console("warn", arguments); }, \
        error: function () { __couchette_console("error", arguments); } }; \
        var __couchette_syncFunction =
        """

    /// The entry point, after the user's source and a newline: runs the function once per call of a batch,
    /// `progress.i` naming the call running (for the watchdog's per-call time limit), each call's output `null`
    /// when it threw something other than `{forbidden}`/`{unauthorized}` — except in a batch of one, which lets
    /// the exception leave, so that its text and line can be read.
    private static let suffix = """
        if (typeof __couchette_syncFunction !== "function") { \
        throw new TypeError("the sync function must be a function expression, like function(doc, oldDoc) {…}"); } \
        return function (calls, userContext, progress) { \
        var outputs = [], single = calls.length === 1; \
        __couchette_user = userContext; \
        try { \
        for (var i = 0; i < calls.length; i++) { \
        progress.i = i; \
        var out = {channels: [], access: [], roles: [], expiry: [], reject: null, logs: []}; \
        __couchette_out = out; \
        try { \
        try { __couchette_syncFunction(calls[i][0], calls[i][1], {xattrs: {}}); } \
        catch (x) { \
        if (x !== null && x !== undefined && x.forbidden) { __couchette_reject(403, x.forbidden); } \
        else if (x !== null && x !== undefined && x.unauthorized) { __couchette_reject(401, x.unauthorized); } \
        else { throw x; } } \
        } catch (x) { if (single) { throw x; } out = null; } \
        __couchette_out = null; \
        outputs.push(out === null ? null : [out.channels, out.access, out.roles, out.expiry, out.reject, out.logs]); } \
        } finally { __couchette_out = null; __couchette_user = null; } \
        return __couchette_stringify(outputs); }; \
        })()
        """
}
