import CouchetteCore
import Foundation

/// Values for a query's `$name` parameters. They are bound, never spliced into the SQL, so a value can hold any text.
///
/// ```swift
/// query.parameters = Parameters().setString("milk", forName: "term").setInt(10, forName: "limit")
/// ```
public final class Parameters: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: JSONValue] = [:]

    public init() {}

    /// A copy of `parameters`.
    public init(parameters: Parameters?) {
        values = parameters?.all ?? [:]
    }

    /// Sets any JSON value (strings, numbers, Booleans, arrays, dictionaries, `Date`s as ISO-8601 strings); nil
    /// removes it. A value that is not JSON is ignored.
    @discardableResult
    public func setValue(_ value: Any?, forName name: String) -> Self {
        let json = value.flatMap { try? DocumentValues.json(from: $0, path: name) { _ in } }
        lock.withLock { values[name] = json }
        return self
    }

    @discardableResult public func setString(_ value: String?, forName name: String) -> Self { setValue(value, forName: name) }
    @discardableResult public func setInt(_ value: Int, forName name: String) -> Self { setValue(value, forName: name) }
    @discardableResult public func setInt64(_ value: Int64, forName name: String) -> Self { setValue(value, forName: name) }
    @discardableResult public func setDouble(_ value: Double, forName name: String) -> Self { setValue(value, forName: name) }
    @discardableResult public func setFloat(_ value: Float, forName name: String) -> Self { setValue(Double(value), forName: name) }
    @discardableResult public func setBoolean(_ value: Bool, forName name: String) -> Self { setValue(value, forName: name) }
    @discardableResult public func setDate(_ value: Date?, forName name: String) -> Self { setValue(value, forName: name) }
    @discardableResult public func setArray(_ value: ArrayObject?, forName name: String) -> Self {
        setValue(value?.toArray(), forName: name)
    }
    @discardableResult public func setDictionary(_ value: DictionaryObject?, forName name: String) -> Self {
        setValue(value?.toDictionary(), forName: name)
    }
    /// Sets a blob: matches the blob's metadata dictionary as stored in documents.
    @discardableResult public func setBlob(_ value: Blob?, forName name: String) -> Self { setValue(value, forName: name) }
    @_disfavoredOverload @discardableResult
    public func setArray(_ value: [Any]?, forName name: String) -> Self { setValue(value, forName: name) }
    @_disfavoredOverload @discardableResult
    public func setDictionary(_ value: [String: Any]?, forName name: String) -> Self { setValue(value, forName: name) }

    /// The value of a parameter as a Foundation value, or nil.
    public func value(forName name: String) -> Any? {
        lock.withLock { values[name] }.map(DocumentValues.value(from:))
    }

    var all: [String: JSONValue] { lock.withLock { values } }
}
