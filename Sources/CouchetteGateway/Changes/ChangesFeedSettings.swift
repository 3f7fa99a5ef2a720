// MARK: - ChangesFeedSettings

/// Process-wide knobs of `_changes` feeds that tests adjust for the duration of a task.
///
/// The heartbeat floor is 25 s (spec: gateway-rest-api.md §11.1); tests that check heartbeats lower it for the
/// server they run, which inherits the task-local value:
///
/// ```swift
/// try await ChangesFeedSettings.$minimumHeartbeat.withValue(.milliseconds(50)) {
///     try await GatewayFixture.withRunningGateway { client, ports in … }
/// }
/// ```
enum ChangesFeedSettings {
    /// Non-zero `heartbeat` values below this are raised to it; 25 s unless a test lowers it.
    @TaskLocal static var minimumHeartbeat: Duration = ChangesOptions.minimumHeartbeat
}
