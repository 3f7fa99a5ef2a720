import CouchetteCore
import Foundation

// MARK: - SyncFunctionOutput

/// The calls one sync function invocation made, as the JavaScript wrapper reports them (see
/// ``SyncFunctionScript``), and their validation into a ``SyncFunctionOutcome`` (spec: sync-function.md §3, §4, §6).
///
/// Checks run in Sync Gateway's order: invalid channel names and `role()` values without the `role:` prefix fail
/// the call first (500 `Exception in JS sync function`, even when the function also rejected the document), then a
/// rejection wins, then invalid user or role names in `access()`/`role()` fail it (500 `Error in JS sync function`).
struct SyncFunctionOutput {
    /// Names passed to `channel()`, in call order.
    var channels: [String] = []
    /// Each `access(principals, channels)` call.
    var access: [(principals: [String], channels: [String])] = []
    /// Each `role(users, roles)` call, roles as written (`role:NAME`).
    var roles: [(users: [String], roles: [String])] = []
    /// Each number or string passed to `expiry()`, in call order.
    var expiry: [JSONValue] = []
    /// The first `reject(status, message)`, including thrown `{forbidden}`/`{unauthorized}`.
    var rejection: (status: Int, message: String)?
    /// The `console` lines the call wrote, with their level (`log`, `info`, `warn`, `error`).
    var logs: [(level: String, message: String)] = []

    private static let rolePrefix = "role:"

    /// Creates an empty output.
    init() {}

    /// Decodes one call's output, an element of the wrapper's output array.
    ///
    /// - Throws: A description of what is malformed (which only a function tampering with the runtime causes).
    init(_ value: JSONValue) throws(JavaScriptException) {
        guard case .array(let fields) = value, fields.count == 6, let channels = Self.strings(fields[0]),
            let access = Self.pairs(fields[1]), let roles = Self.pairs(fields[2]), let expiry = fields[3].arrayValue
        else {
            throw JavaScriptException(message: "the sync function's output is malformed")
        }
        self.channels = channels
        self.expiry = expiry
        self.access = access.map { (principals: $0.0, channels: $0.1) }
        self.roles = roles.map { (users: $0.0, roles: $0.1) }
        logs = (fields[5].arrayValue ?? []).compactMap { entry in
            guard let pair = entry.arrayValue, pair.count == 2, let level = pair[0].stringValue,
                let message = pair[1].stringValue
            else { return nil }
            return (level, message)
        }
        if let reject = fields[4].arrayValue, reject.count == 2, let status = reject[0].intValue,
            let message = reject[1].stringValue
        {
            rejection = (Int(status), message)
        }
    }

    // MARK: - Outcome

    /// Validates the calls and builds the outcome.
    ///
    /// - Parameter now: The time relative expiries count from.
    func outcome(now: Date) -> SyncFunctionOutcome {
        // 1. Values Sync Gateway refuses while collecting the output (sync_runner.go `After`).
        if let invalid = channels.first(where: { !PrincipalName.isValidChannel($0) }) {
            return .failed(.syncFunctionException, detail: "channel() was given an invalid channel name \(quoted(invalid))")
        }
        if let invalid = access.lazy.flatMap(\.channels).first(where: { !PrincipalName.isValidChannel($0) }) {
            return .failed(.syncFunctionException, detail: "access() was given an invalid channel name \(quoted(invalid))")
        }
        if let invalid = roles.lazy.flatMap(\.roles).first(where: { !$0.hasPrefix(Self.rolePrefix) }) {
            return .failed(
                .syncFunctionException, detail: "role() was given \(quoted(invalid)), which does not begin with \"role:\"")
        }
        // 2. A rejection discards everything else.
        if let rejection {
            return .rejected(Self.error(status: rejection.status, message: rejection.message))
        }
        // 3. Principal names, checked when grants are applied (crud.go).
        for principal in access.lazy.flatMap(\.principals) where !Self.isValidPrincipal(principal) {
            return .failed(.syncFunctionError, detail: "access() was given an invalid user or role name \(quoted(principal))")
        }
        for user in roles.lazy.flatMap(\.users) where !PrincipalName.isValid(user) {
            return .failed(.syncFunctionError, detail: "role() was given an invalid user name \(quoted(user))")
        }
        for role in roles.lazy.flatMap(\.roles) where !PrincipalName.isValid(String(role.dropFirst(Self.rolePrefix.count))) {
            return .failed(.syncFunctionError, detail: "role() was given an invalid role name \(quoted(role))")
        }
        return .routed(routingResult(now: now))
    }

    private func routingResult(now: Date) -> RoutingResult {
        var result = RoutingResult()
        let channelSet = Set(channels)
        result.channels = channelSet.contains(PrincipalName.allChannels) ? [PrincipalName.allChannels] : channelSet
        // Inserted one by one into the result's sets (no intermediate sets: this runs for every write).
        for call in access {
            for principal in call.principals {
                for channel in call.channels where channel != PrincipalName.allChannels {
                    result.access[principal, default: []].insert(channel)
                }
            }
        }
        for call in roles {
            for user in call.users {
                for role in call.roles { result.roles[user, default: []].insert(String(role.dropFirst(Self.rolePrefix.count))) }
            }
        }
        result.expiry = expiry.reversed().lazy.compactMap { SyncExpiry($0, now: now) }.first?.date
        return result
    }

    // MARK: - Helpers

    /// A user name, or `role:` and a role name.
    private static func isValidPrincipal(_ name: String) -> Bool {
        PrincipalName.isValid(name.hasPrefix(rolePrefix) ? String(name.dropFirst(rolePrefix.count)) : name)
    }

    /// The error for a rejection: `throw({forbidden})` is 403, `throw({unauthorized})` 401 (with the
    /// `WWW-Authenticate` challenge every 401 of the gateway carries).
    private static func error(status: Int, message: String) -> GatewayError {
        switch status {
        case 401: .unauthorized(message)
        case 403: .forbidden(message)
        default: GatewayError(statusCode: status, reason: message)
        }
    }

    private func quoted(_ text: String) -> String {
        JSONValue.string(text).serializedString()
    }

    private static func strings(_ value: JSONValue) -> [String]? {
        guard let elements = value.arrayValue else { return nil }
        let strings = elements.compactMap(\.stringValue)
        return strings.count == elements.count ? strings : nil
    }

    private static func pairs(_ value: JSONValue) -> [([String], [String])]? {
        guard let elements = value.arrayValue else { return nil }
        var pairs: [([String], [String])] = []
        for element in elements {
            guard let pair = element.arrayValue, pair.count == 2, let names = strings(pair[0]),
                let values = strings(pair[1])
            else { return nil }
            pairs.append((names, values))
        }
        return pairs
    }
}
