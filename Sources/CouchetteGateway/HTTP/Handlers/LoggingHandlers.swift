import Foundation
import CouchetteCore
import Hummingbird
import Logging

// MARK: - LoggingHandlers

/// The admin port's `GET`/`PUT /_logging` (Sync Gateway 1.x): the enabled log keys, changed at run time in
/// ``DatabaseRegistry/logSettings``.
///
/// ```text
/// GET /_logging                         → {"HTTP":true}
/// PUT /_logging {"CRUD":true,"HTTP":false}  → 200; now {"CRUD":true}
/// PUT /_logging?replace=true {"Auth":true}  → only Auth
/// PUT /_logging?level=3                 → level warn (1 debug, 2 info, 3 warn); ?logLevel=debug also works
/// ```
struct LoggingHandlers: Sendable {
    // MARK: - Properties

    /// The listener's environment.
    let environment: RouteEnvironment

    /// The settings changed.
    var settings: LogSettings { environment.registry.logSettings }

    // MARK: - Handlers

    /// `GET /_logging`: the enabled keys, each mapped to `true`.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        environment.renderer.response(
            json: .object(
                Dictionary(
                    settings.keyNames.map { ($0, JSONValue.bool(true)) }, uniquingKeysWith: { first, _ in first })))
    }

    /// `PUT /_logging`: a body of key → boolean enables and disables keys (`?replace=true` starts from none);
    /// `?level=1…3` or `?logLevel=<name>` sets the level, and then the body may be empty. → 200, empty body.
    ///
    /// - Throws: 400 for a body that is not an object of booleans or an unknown level.
    @Sendable func put(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let query = QueryOptions(request)
        let level = try Self.level(query)
        let bytes = try await environment.body.bytes(of: request)
        var changes: [String: Bool]?
        if !bytes.isEmpty || level == nil {
            try RequestBody.requireJSONContentType(request)
            guard case .object(let object) = try RequestBody.parse(bytes) else {
                throw GatewayError.badRequest("Invalid JSON or non-boolean values")
            }
            var parsed: [String: Bool] = [:]
            for (key, value) in object {
                guard let enabled = value.boolValue, !key.isEmpty else {
                    throw GatewayError.badRequest("Invalid JSON or non-boolean values")
                }
                parsed[key] = enabled
            }
            changes = parsed
        }
        if let level { settings.setLevel(level) }
        if let changes { settings.update(changes, replace: try query.bool("replace")) }
        return Response(status: .ok)
    }

    /// The level asked for by `?level=N` or `?logLevel=name`, or `nil`.
    private static func level(_ query: QueryOptions) throws(GatewayError) -> Logger.Level? {
        if let text = query.string("logLevel") {
            guard let level = LogSettings.level(named: text) else { throw .badRequest("Invalid log level") }
            return level
        }
        if let text = query.string("level") {
            guard let number = Int(text), let level = LogSettings.level(number: number) else {
                throw .badRequest("Invalid log level")
            }
            return level
        }
        return nil
    }

    /// `GET /_logging/tail?since=N[&level=info][&key=CRUD]`: the gateway's recent log lines after line `N` (the Admin
    /// UI's log view), at or above `level`, of log key `key` —
    /// `{"lines": [{"number", "time", "level", "message"}], "last": N}`; `last` is where to ask from next.
    @Sendable func tail(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let query = QueryOptions(request)
        let since = try query.int("since") ?? 0
        var minimum = Logger.Level.trace
        if let name = query.string("level") {
            guard let level = Logger.Level(rawValue: name.lowercased()) else {
                throw GatewayError.badRequest("Unknown level \(name): trace, debug, info, notice, warning, error or critical")
            }
            minimum = level
        }
        let key = query.string("key")?.lowercased()
        let tail = environment.registry.logTail
        let last = tail.lastNumber
        let lines = tail.lines(after: since).filter { line in
            line.level >= minimum && (key == nil || line.key?.lowercased() == key)
        }
        return environment.renderer.response(json: [
            "last": .int(Int64(last)),
            "lines": .array(lines.map { line in
                [
                    "number": .int(Int64(line.number)), "time": .string(line.date.formatted(Date.ISO8601FormatStyle())),
                    "level": .string(line.level.rawValue), "message": .string(line.message),
                ]
            }),
        ])
    }
}
