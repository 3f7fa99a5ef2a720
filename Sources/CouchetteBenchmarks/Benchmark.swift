/// Times a piece of work against a baseline doing the same work, in the same process, and prints the ratio
/// as `BENCH <figure> <value> <goal>`.
struct Benchmark {
    /// Runs `body` `repetitions` times and returns the fastest run in seconds.
    static func fastest(repetitions: Int = 5, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<repetitions {
            let elapsed = try ContinuousClock().measure(body)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            best = min(best, seconds)
        }
        return best
    }

    /// Prints one figure: how many times faster `measured` is than `baseline` (higher is better).
    static func report(_ figure: String, baselineSeconds: Double, measuredSeconds: Double, goal: String) {
        let ratio = baselineSeconds / measuredSeconds
        print("# \(figure): baseline \(format(baselineSeconds * 1000)) ms, measured \(format(measuredSeconds * 1000)) ms")
        print("BENCH \(figure) \(format(ratio)) \(goal)")
    }

    static func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return String(scaled)
    }
}
