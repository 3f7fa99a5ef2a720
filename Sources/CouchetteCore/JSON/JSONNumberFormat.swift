// MARK: - JSONNumberFormat

/// How numbers are written: Go's `encoding/json` form, which is also ECMAScript's `Number.prototype.toString`,
/// so that revision IDs of bodies holding numbers come out as Sync Gateway's do.
///
/// A double is written with the fewest significant digits that read back as the same double; plainly when its
/// magnitude is in [1e-6, 1e21) (`0.000001`, `100000000000000000000`, `2`), otherwise with an exponent that has
/// a sign and no padding (`1e+21`, `1e-7`, `1.5e-10`). Negative zero is `-0`, as Go writes it.
enum JSONNumberFormat {
    /// The largest magnitude up to which every integer is a `Double` exactly (2^53).
    static let exactIntegerLimit: Int64 = 1 << 53

    /// `number` in Go's form; nil when it is not finite.
    static func goText(_ number: Double) -> String? {
        guard number.isFinite else { return nil }
        // Swift lays out plainly what it can (about 1e-4 to 2^53): then only a trailing `.0` differs.
        let description = number.description
        if !description.utf8.contains(UInt8(ascii: "e")) {
            return description.hasSuffix(".0") ? String(description.dropLast(2)) : description
        }
        // An exponent form (zero never has one): rebuild it from the digits.
        let sign = number.sign == .minus ? "-" : ""
        let (digits, pointPosition) = shortestDigits(of: number.magnitude)
        let magnitude = number.magnitude
        if magnitude < 1e-6 || magnitude >= 1e21 {
            return sign + exponential(digits, exponent: pointPosition - 1)
        }
        return sign + plain(digits, pointPosition: pointPosition)
    }

    /// Go's form of an integer that passed through a `Double` (Sync Gateway reads every number as a float64):
    /// exact up to 2^53, rounded to the nearest double beyond.
    static func goText(_ number: Int64) -> String {
        if number.magnitude <= UInt64(exactIntegerLimit) { return String(number) }
        return goText(Double(number)) ?? String(number)
    }

    /// The form written for storage and responses: Go's form, with `.0` added when that form would read back as an
    /// integer (`2.0`, `-0.0`, `100000000000000000000.0`), so that a double stays a double.
    static func storedText(_ number: Double) -> String? {
        guard number.isFinite else { return nil }
        let description = number.description
        if !description.utf8.contains(UInt8(ascii: "e")) { return description }  // already Go's, `.0` kept
        guard let text = goText(number) else { return nil }
        if text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) { return text }
        return text + ".0"
    }

    // MARK: - Digits

    /// The shortest decimal digits that round-trip `magnitude` (no leading or trailing zeros), and where the
    /// decimal point goes: the value is `0.DIGITS × 10^pointPosition`.
    ///
    /// Swift's `description` already chooses the shortest round-trip digits (the closest when several are as
    /// short), as Go's `strconv` does; only its layout differs, so this reads the digits back out of it.
    private static func shortestDigits(of magnitude: Double) -> (digits: [UInt8], pointPosition: Int) {
        let text = Array(magnitude.description.utf8)
        var mantissa = text[...]
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            mantissa = text[..<e]
            exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
        }
        var digits: [UInt8] = []
        var pointPosition = 0
        var seenPoint = false
        for byte in mantissa {
            if byte == UInt8(ascii: ".") {
                seenPoint = true
                continue
            }
            if digits.isEmpty && byte == UInt8(ascii: "0") {
                if seenPoint { pointPosition -= 1 }
                continue
            }
            digits.append(byte)
            if !seenPoint { pointPosition += 1 }
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (digits, pointPosition + exponent)
    }

    /// `D.DDDe±X`: Go's `'e'` format with `-1` precision, its two-digit exponent padding removed as
    /// `encoding/json` does.
    private static func exponential(_ digits: [UInt8], exponent: Int) -> String {
        var text = String(decoding: digits.prefix(1), as: UTF8.self)
        if digits.count > 1 { text += "." + String(decoding: digits.dropFirst(), as: UTF8.self) }
        return text + "e" + (exponent < 0 ? "-" : "+") + String(exponent.magnitude)
    }

    /// The digits with the point placed, padded with zeros: Go's `'f'` format with `-1` precision.
    private static func plain(_ digits: [UInt8], pointPosition: Int) -> String {
        let text = String(decoding: digits, as: UTF8.self)
        if pointPosition <= 0 { return "0." + String(repeating: "0", count: -pointPosition) + text }
        if pointPosition >= digits.count { return text + String(repeating: "0", count: pointPosition - digits.count) }
        let split = text.utf8.index(text.utf8.startIndex, offsetBy: pointPosition)
        return String(text[..<split]) + "." + String(text[split...])
    }
}
