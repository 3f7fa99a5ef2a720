// MARK: - JSONWriter

/// Writes compact JSON text piece by piece, for encoders that know their structure and would otherwise build a
/// ``JSONValue`` tree only to serialize it. Commas and colons are placed for the caller; object members come out in
/// the order written (not sorted); values written whole (``value(_:)``) are serialized as ``JSONValue/serialized(prettyPrinted:)``
/// does.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("history")
/// writer.beginArray()
/// writer.string("1-abc")
/// writer.int(-1)
/// writer.endArray()
/// writer.endObject()
/// writer.bytes   // {"history":["1-abc",-1]}
/// ```
public struct JSONWriter: Sendable {
    private var serializer: JSONSerializer
    /// For each open container, whether a value was written in it (the next one needs a comma).
    private var hasValue: [Bool] = []
    /// Whether a key was just written (its value needs no comma).
    private var afterKey = false

    /// Creates an empty writer.
    ///
    /// - Parameter capacity: Bytes to reserve.
    public init(reservingCapacity capacity: Int = 256) {
        serializer = JSONSerializer(reservingCapacity: capacity)
    }

    /// The text written so far (UTF-8).
    public var bytes: [UInt8] { serializer.output }

    /// Starts an object.
    public mutating func beginObject() {
        separate()
        serializer.output.append(UInt8(ascii: "{"))
        hasValue.append(false)
    }

    /// Ends the innermost object.
    public mutating func endObject() {
        hasValue.removeLast()
        serializer.output.append(UInt8(ascii: "}"))
    }

    /// Starts an array.
    public mutating func beginArray() {
        separate()
        serializer.output.append(UInt8(ascii: "["))
        hasValue.append(false)
    }

    /// Ends the innermost array.
    public mutating func endArray() {
        hasValue.removeLast()
        serializer.output.append(UInt8(ascii: "]"))
    }

    /// Writes an object member's key; its value comes next.
    public mutating func key(_ key: String) {
        separate()
        serializer.writeString(key)
        serializer.output.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a string value.
    public mutating func string(_ string: String) {
        separate()
        serializer.writeString(string)
    }

    /// Writes an integer value.
    public mutating func int(_ number: Int64) {
        separate()
        serializer.writeInteger(number)
    }

    /// Writes a number value (as ``JSONValue/double(_:)`` would be).
    public mutating func double(_ number: Double) {
        separate()
        serializer.writeDouble(number)
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ flag: Bool) {
        separate()
        serializer.append(flag ? "true" : "false")
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        serializer.append("null")
    }

    /// Writes a whole value.
    public mutating func value(_ value: JSONValue) {
        separate()
        serializer.write(value)
    }

    /// Writes a value already serialized, as it is: `text` must be one whole JSON value (a stored body passed on
    /// without parsing it).
    public mutating func json(_ text: [UInt8]) {
        separate()
        serializer.output.append(contentsOf: text)
    }

    /// The comma before a value or key that follows another in its container.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasValue.indices.last else { return }
        if hasValue[last] { serializer.output.append(UInt8(ascii: ",")) }
        hasValue[last] = true
    }
}
