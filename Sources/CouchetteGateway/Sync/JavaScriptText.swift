import CJavaScriptCore

// MARK: - JavaScriptText

/// Conversions between Swift text and JavaScriptCore's `JSStringRef`, the one place the sync function runtime
/// creates and releases JavaScriptCore strings.
///
/// ```swift
/// let value = JavaScriptText.withString(#"{"a":1}"#) { JSValueMakeFromJSONString(context, $0) }
/// ```
enum JavaScriptText {
    /// Calls `body` with a temporary JavaScriptCore string holding UTF-8 `bytes`, released afterwards.
    ///
    /// - Parameter bytes: UTF-8 text without NUL bytes (JSON text qualifies: it escapes U+0000).
    static func withString<Result>(utf8 bytes: [UInt8], _ body: (JSStringRef) -> Result) -> Result {
        var terminated = bytes
        terminated.append(0)
        let string: JSStringRef = terminated.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { JSStringCreateWithUTF8CString($0.baseAddress) }
        }
        defer { JSStringRelease(string) }
        return body(string)
    }

    /// Calls `body` with a temporary JavaScriptCore string holding `text` (which may contain NUL characters),
    /// released afterwards.
    static func withString<Result>(_ text: String, _ body: (JSStringRef) -> Result) -> Result {
        let units = Array(text.utf16)
        let string: JSStringRef = units.withUnsafeBufferPointer { JSStringCreateWithCharacters($0.baseAddress, $0.count) }
        defer { JSStringRelease(string) }
        return body(string)
    }

    /// The text of a JavaScriptCore string; unpaired surrogates become U+FFFD.
    static func string(_ string: JSStringRef) -> String {
        let count = JSStringGetLength(string)
        guard count > 0, let characters = JSStringGetCharactersPtr(string) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF16.self)
    }

    /// The UTF-8 bytes of a JavaScriptCore string, without a terminating NUL.
    static func utf8(_ string: JSStringRef) -> [UInt8] {
        let capacity = JSStringGetMaximumUTF8CStringSize(string)
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            let written = buffer.withMemoryRebound(to: CChar.self) { JSStringGetUTF8CString(string, $0.baseAddress, capacity) }
            initialized = max(0, written - 1)  // the count includes the NUL
        }
    }

    /// The result of JavaScript's `String(value)`, or nil when that throws.
    static func describe(_ value: JSValueRef, in context: JSContextRef) -> String? {
        var exception: JSValueRef?
        guard let string = JSValueToStringCopy(context, value, &exception), exception == nil else { return nil }
        defer { JSStringRelease(string) }
        return Self.string(string)
    }
}
