import CouchetteCore
import Foundation
import Hummingbird

// MARK: - QueryOptions

/// Typed access to a request's query parameters, with 400 errors naming the parameter.
///
/// ```swift
/// let query = QueryOptions(request)
/// let revs = try query.bool("revs")            // ?revs=true → true, absent → false
/// let limit = try query.int("limit")           // ?limit=x → 400 "Invalid limit"
/// let keys = try query.json("keys")            // ?keys=["a","b"]
/// ```
struct QueryOptions: Sendable {
    private let parameters: [String: String]

    /// Reads the query of `request` (the last value wins for repeated names).
    init(_ request: Request) {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters {
            parameters[String(name)] = String(value)
        }
        self.parameters = parameters
    }

    /// A parameter restricted to `allowed` values (absent: nil).
    ///
    /// - Throws: 400 `Unknown <name>: <value>` for any other value.
    func oneOf(_ name: String, _ allowed: Set<String>) throws(GatewayError) -> String? {
        guard let value = parameters[name] else { return nil }
        guard allowed.contains(value) else {
            throw .badRequest("Unknown \(name) \(value.debugDescription); expected one of \(allowed.sorted().joined(separator: ", "))")
        }
        return value
    }

    /// Creates options from a dictionary (for POST bodies merged with queries).
    init(_ parameters: [String: String]) {
        self.parameters = parameters
    }

    /// A raw value.
    func string(_ name: String) -> String? {
        parameters[name]
    }

    /// Whether the parameter is present.
    func contains(_ name: String) -> Bool {
        parameters[name] != nil
    }

    /// A boolean: `true`/`false` (absent → `defaultValue`).
    func bool(_ name: String, default defaultValue: Bool = false) throws(GatewayError) -> Bool {
        guard let value = parameters[name] else { return defaultValue }
        switch value.lowercased() {
        case "true", "1": return true
        case "false", "0", "": return false
        default: throw .badRequest("Invalid value for \(name): expected true or false")
        }
    }

    /// A non-negative integer, or nil when absent.
    func int(_ name: String) throws(GatewayError) -> Int? {
        guard let value = parameters[name] else { return nil }
        guard let number = Int(value), number >= 0 else { throw .badRequest("Invalid \(name)") }
        return number
    }

    /// A JSON value, or nil when absent.
    func json(_ name: String) throws(GatewayError) -> JSONValue? {
        guard let value = parameters[name] else { return nil }
        do {
            return try JSONValue(parsing: value)
        } catch {
            throw .badRequest("Invalid JSON in \(name)")
        }
    }

    /// A JSON array of strings, or nil when absent.
    func stringArray(_ name: String) throws(GatewayError) -> [String]? {
        guard let value = try json(name) else { return nil }
        guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
            throw .badRequest("Invalid \(name): expected a JSON array of strings")
        }
        return array.compactMap(\.stringValue)
    }
}
