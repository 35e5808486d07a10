import Foundation

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms a
/// recipient must also accept, in GMT as the RFC requires. Anything else is `nil`. Used by
/// `Retry-After` and the HTTP cache. Parsed by hand: no `DateFormatter` (costly to make, and
/// locale-dependent).
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The longest value read: a hostile header is not parsed past this.
    static let maxLength = 64

    static func parse(_ text: String?) -> Date? {
        guard let text, text.utf8.count <= maxLength else { return nil }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT → [Sun, 06, Nov, 1994, 08:49:37, GMT]
        if words.count == 6, words[5] == "GMT" {
            return make(day: words[1], month: words[2], year: words[3], time: words[4])
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT → [Sunday, 06-Nov-94, 08:49:37, GMT]
        if words.count == 4, words[3] == "GMT" {
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let short = Int(parts[2]), parts[2].count == 2 else { return nil }
            // Two-digit years: the RFC asks for the most recent past year with those digits; 50 years
            // either way is the usual reading.
            let year = short < 50 ? 2000 + short : 1900 + short
            return make(day: parts[0], month: parts[1], year: String(year), time: words[2])
        }
        // asctime: Sun Nov  6 08:49:37 1994 → [Sun, Nov, 6, 08:49:37, 1994]
        if words.count == 5 {
            return make(day: words[2], month: words[1], year: words[4], time: words[3])
        }
        return nil
    }

    private static func make(day: String, month: String, year: String, time: String) -> Date? {
        let clock = time.split(separator: ":")
        guard let day = Int(day), (1...31).contains(day), let month = months.firstIndex(of: month.lowercased()),
            year.count == 4, let year = Int(year), clock.count == 3,
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        // Days since 1970-01-01 (civil-from-days, proleptic Gregorian): no Calendar, no locale.
        let y = month < 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = month + 1
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds; years outside
    /// 1–9999 are clamped to them.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        // 0001-01-01 through 9999-12-31 23:59:59.
        let clamped = interval.isFinite ? min(max(interval, -62_135_596_800), 253_402_300_799) : 0
        let seconds = Int(clamped.rounded(.down))
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        // Civil from days (the inverse of `make`).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        let names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(names[weekday]), \(two(day)) \(monthNames[month - 1]) \(yearText) "
            + "\(two(rest / 3_600)):\(two(rest % 3_600 / 60)):\(two(rest % 60)) GMT"
    }
}
