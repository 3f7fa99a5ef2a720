import CouchetteCore
import Foundation

// MARK: - SyncFunctionOutput

/// The calls one sync function invocation made, as the JavaScript wrapper reports them (see
/// ``SyncFunctionScript``; read by ``SyncFunctionOutputReader``), and their validation into a
/// ``SyncFunctionOutcome`` (spec: sync-function.md §3, §4, §6).
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

    // MARK: - Outcome

    /// Validates the calls and builds the outcome.
    ///
    /// - Parameter now: The time relative expiries count from.
    func outcome(now: Date) -> SyncFunctionOutcome {
        // Plain loops rather than lazy chains of closures: this runs for every write.
        // 1. Values Sync Gateway refuses while collecting the output (sync_runner.go `After`).
        for channel in channels where !PrincipalName.isValidChannel(channel) {
            return .failed(.syncFunctionException, detail: "channel() was given an invalid channel name \(quoted(channel))")
        }
        for call in access {
            for channel in call.channels where !PrincipalName.isValidChannel(channel) {
                return .failed(
                    .syncFunctionException, detail: "access() was given an invalid channel name \(quoted(channel))")
            }
        }
        for call in roles {
            for role in call.roles where !role.hasPrefix(Self.rolePrefix) {
                return .failed(
                    .syncFunctionException, detail: "role() was given \(quoted(role)), which does not begin with \"role:\"")
            }
        }
        // 2. A rejection discards everything else.
        if let rejection {
            return .rejected(Self.error(status: rejection.status, message: rejection.message))
        }
        // 3. Principal names, checked when grants are applied (crud.go).
        for call in access {
            for principal in call.principals where !Self.isValidPrincipal(principal) {
                return .failed(
                    .syncFunctionError, detail: "access() was given an invalid user or role name \(quoted(principal))")
            }
        }
        for call in roles {
            for user in call.users where !PrincipalName.isValid(user) {
                return .failed(.syncFunctionError, detail: "role() was given an invalid user name \(quoted(user))")
            }
        }
        for call in roles {
            for role in call.roles where !PrincipalName.isValid(String(role.dropFirst(Self.rolePrefix.count))) {
                return .failed(.syncFunctionError, detail: "role() was given an invalid role name \(quoted(role))")
            }
        }
        return .routed(routingResult(now: now))
    }

    private func routingResult(now: Date) -> RoutingResult {
        var result = RoutingResult()
        result.channels = PrincipalName.collapsingWildcard(Set(channels))
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
        if !expiry.isEmpty {
            result.expiry = expiry.reversed().lazy.compactMap { SyncExpiry($0, now: now) }.first?.date
        }
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
}
