import Foundation

/// Turns a message into the text written by ``ConsoleLogger`` and ``FileLogger``.
///
/// Plain text: `2026-11-22T01:02:03.456Z Couchette [database] WARNING: message`. JSON Lines (a file logger
/// with ``LogFileConfiguration/usePlainText`` off):
/// `{"time":"2026-11-22T01:02:03.456Z","level":"warning","domain":"database","message":"message"}`.
/// Neither form includes the trailing newline.
enum LogLineFormatter {
    /// The plain-text line for a message.
    static func plainText(date: Date, level: LogLevel, domain: LogDomain, message: String) -> String {
        "\(timestamp(date)) Couchette [\(domain.name)] \(level.label): \(message)"
    }

    /// The JSON object (on one line) for a message.
    static func json(date: Date, level: LogLevel, domain: LogDomain, message: String) -> String {
        #"{"time":"\#(timestamp(date))","level":"\#(level.label.lowercased())","domain":"\#(domain.name)","#
            + #""message":"\#(jsonEscaped(message))"}"#
    }

    /// `date` in UTC as ISO 8601 with milliseconds, e.g. `2026-11-22T01:02:03.456Z`.
    ///
    /// Rounded to the nearest millisecond. Computed by hand (Howard Hinnant's `civil_from_days`): no formatter
    /// object, no locale, thread-safe.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (days, millisecondOfDay) = floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let second = millisecondOfDay / 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(second / 3600, 2)):\(pad(second / 60 % 60, 2)):\(pad(second % 60, 2))"
            + ".\(pad(millisecondOfDay % 1000, 3))Z"
    }

    /// `string` escaped for use inside a JSON string literal.
    static func jsonEscaped(_ string: String) -> String {
        var result = ""
        result.reserveCapacity(string.utf8.count)
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    // MARK: - Private

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value / divisor - (value % divisor < 0 ? 1 : 0)
        return (quotient, value - quotient * divisor)
    }

    /// Year, month (1–12) and day (1–31) of the proleptic Gregorian calendar for days since 1970-01-01.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
