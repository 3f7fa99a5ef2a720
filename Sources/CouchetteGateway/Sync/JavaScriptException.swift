import CJavaScriptCore

// MARK: - JavaScriptException

/// A JavaScript exception caught by the sync function runtime, reduced to its text and line: the one choke point
/// where JavaScriptCore's exception values become Swift values.
///
/// The text is what `String(exception)` gives (`TypeError: null is not an object (evaluating 'oldDoc.type')`).
/// It can quote document content, so it is for logs and the administrator's Live Preview, never for clients.
struct JavaScriptException: Error, Sendable, Equatable {
    /// `String(exception)`, e.g. `SyntaxError: Unexpected token '}'`.
    var message: String
    /// The exception's `line` property (errors raised by the engine carry it), when there is one.
    var line: Int?

    /// Creates an exception description.
    init(message: String, line: Int? = nil) {
        self.message = message
        self.line = line
    }

    /// Reads an exception value thrown in `context`.
    ///
    /// Converting a thrown object to text may run its `toString`; if that throws too, the message is a
    /// placeholder.
    init(_ exception: JSValueRef, in context: JSContextRef) {
        message = JavaScriptText.describe(exception, in: context) ?? "(an exception that cannot be converted to text)"
        line = nil
        guard JSValueIsObject(context, exception), let object = JSValueToObject(context, exception, nil) else { return }
        let value = JavaScriptText.withString("line") { JSObjectGetProperty(context, object, $0, nil) }
        if let value, JSValueIsNumber(context, value) {
            let number = JSValueToNumber(context, value, nil)
            if number.isFinite, number >= 1, number <= Double(Int32.max) { line = Int(number) }
        }
    }

    /// `message (line N)`, the line omitted when unknown.
    var description: String {
        line.map { "\(message) (line \($0))" } ?? message
    }
}
