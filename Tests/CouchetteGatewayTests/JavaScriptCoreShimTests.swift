import CJavaScriptCore
import Testing

/// The `CJavaScriptCore` shim links Debian's JavaScriptCore and exposes the execution time limit that the
/// sync function runtime relies on to stop runaway functions.
@Suite(.timeLimit(.minutes(5))) struct JavaScriptCoreShimTests {
    private func evaluate(_ source: String, in context: JSGlobalContextRef) -> (value: JSValueRef?, exception: JSValueRef?) {
        let script = JSStringCreateWithUTF8CString(source)
        defer { JSStringRelease(script) }
        var exception: JSValueRef?
        let value = JSEvaluateScript(context, script, nil, nil, 1, &exception)
        return (value, exception)
    }

    @Test func evaluatesJavaScript() throws {
        let context = try #require(JSGlobalContextCreate(nil))
        defer { JSGlobalContextRelease(context) }
        let result = evaluate("var doc = {channels: ['a', 'b']}; doc.channels.length * 21", in: context)
        #expect(result.exception == nil)
        #expect(JSValueToNumber(context, result.value, nil) == 42)
        let failed = evaluate("throw({forbidden: 'wrong user'})", in: context)
        #expect(failed.exception != nil)
    }

    @Test func executionTimeLimitStopsAnInfiniteLoop() throws {
        let group = try #require(JSContextGroupCreate())
        defer { JSContextGroupRelease(group) }
        JSContextGroupSetExecutionTimeLimit(group, 0.05, { _, _ in true }, nil)
        let context = try #require(JSGlobalContextCreateInGroup(group, nil))
        defer { JSGlobalContextRelease(context) }
        let runaway = evaluate("while (true) {}", in: context)
        #expect(runaway.exception != nil)
        // The context stays usable for the next call.
        let next = evaluate("1 + 1", in: context)
        #expect(JSValueToNumber(context, next.value, nil) == 2)
    }
}
