import CJavaScriptCore
import CouchetteCore
import CouchetteTestSupport
import Testing

/// The canonical form of doubles (Go's `encoding/json`, which follows ECMAScript's number-to-string) checked
/// against JavaScriptCore's own `Number.prototype.toString` on random doubles: an oracle that shares no code with
/// ours. The one difference is negative zero, which Go writes `-0` and ECMAScript `0`.
@Suite("Canonical numbers against JavaScriptCore", .timeLimit(.minutes(2)))
struct CanonicalNumberOracleTests {
    @Test("32,000 doubles: random bit patterns, scaled integers and the neighbours of the cut-offs")
    func randomDoubles() throws {
        let context = try #require(JSGlobalContextCreate(nil))
        defer { JSGlobalContextRelease(context) }
        var random = SplitMix64(state: 0x5EED_D0B1E)
        var checked = 0
        for number in Self.samples(using: &random) where number.isFinite {
            let expected = number == 0 ? (number.sign == .minus ? "-0" : "0") : Self.javaScriptText(number, context)
            let ours = String(decoding: JSONValue.double(number).canonicalBytes, as: UTF8.self)
            #expect(ours == expected, "bits \(String(number.bitPattern, radix: 16))")
            if ours != expected { return }
            checked += 1
        }
        #expect(checked > 31_000)
    }

    /// ECMAScript's text of `number`, made by JavaScriptCore from the double's bits (no text on the way in).
    private static func javaScriptText(_ number: Double, _ context: JSGlobalContextRef) -> String {
        let value = JSValueMakeNumber(context, number)
        let string = JSValueToStringCopy(context, value, nil)!
        defer { JSStringRelease(string) }
        let length = JSStringGetMaximumUTF8CStringSize(string)
        var buffer = [CChar](repeating: 0, count: length)
        JSStringGetUTF8CString(string, &buffer, length)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func samples(using random: inout SplitMix64) -> [Double] {
        var samples: [Double] = []
        for _ in 0..<8_000 { samples.append(Double(bitPattern: random.next())) }
        for _ in 0..<8_000 {
            let digits = Double(Int64(bitPattern: random.next()) % 10_000_000_000_000_000)
            let scale = Int(random.next() % 60) - 30
            samples.append(digits * pow10(scale))
        }
        for cutoff in [1e21, 1e-6, 1e-7, 9_007_199_254_740_992, 1e16, 1e15, 5e-324, 1.7976931348623157e308] {
            var below = cutoff
            var above = cutoff
            for _ in 0..<500 {
                samples += [below, above, -below, -above]
                below = below.nextDown
                above = above.nextUp
            }
        }
        samples += [0, -0.0]
        return samples
    }

    private static func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<abs(exponent) { result *= 10 }
        return exponent < 0 ? 1 / result : result
    }
}
