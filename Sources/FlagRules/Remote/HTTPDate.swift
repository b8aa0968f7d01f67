import Foundation

/// HTTP dates (RFC 9110 §5.6.7), written and read by hand: a server writes one or two on
/// every rules answer, and a `DateFormatter` made for each cost more than the rest of the
/// answer. Writes IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); reads it, and the obsolete
/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`)
/// forms, as a recipient must. Times are whole seconds (a fraction is dropped).
package enum HTTPDate {
    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longWeekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` as an IMF-fixdate.
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (days, time) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let day = time < 0 ? days - 1 : days
        let second = time < 0 ? time + 86_400 : time
        let (year, month, dayOfMonth) = civil(fromDays: day)
        // 1970-01-01 was a Thursday.
        let weekday = ((day % 7) + 7 + 4) % 7
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekdays[weekday]), \(two(dayOfMonth)) \(months[month - 1]) \(yearText) "
            + "\(two(second / 3_600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    /// The date `text` names in any of the three forms; nil when it is none of them.
    package static func parse(_ text: String) -> Date? { parse(text, now: Date()) }

    /// The date `text` names in any of the three forms; nil when it is none of them.
    /// `now` decides the century of RFC 850's two-digit year: the most recent year with
    /// those digits that is not more than 50 years ahead (RFC 9110 §5.6.7).
    package static func parse(_ text: String, now: Date) -> Date? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = words.first, text.utf8.count <= 64 else { return nil }
        let parsed: (year: Int, month: Int, day: Int, time: Substring)?
        if first.hasSuffix(",") {
            let name = first.dropLast()
            if words.count == 6, weekdays.contains(String(name)), ["GMT", "UTC"].contains(words[5]) {
                // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
                parsed = number(words[3], digits: 4...4).flatMap { year in
                    month(words[2]).flatMap { month in
                        number(words[1], digits: 1...2).map { (year, month, $0, words[4]) }
                    }
                }
            } else if words.count == 4, longWeekdays.contains(String(name)) || weekdays.contains(String(name)), words[3] == "GMT" {
                // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
                let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
                guard parts.count == 3, let twoDigits = number(parts[2], digits: 2...2), let month = month(parts[1]),
                    let day = number(parts[0], digits: 1...2)
                else { return nil }
                let thisYear = civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
                var year = thisYear - thisYear % 100 + twoDigits
                if year > thisYear + 50 { year -= 100 }
                parsed = (year, month, day, words[2])
            } else {
                return nil
            }
        } else if words.count == 5, weekdays.contains(String(first)) {
            // asctime: Sun Nov  6 08:49:37 1994
            parsed = number(words[4], digits: 4...4).flatMap { year in
                month(words[1]).flatMap { month in number(words[2], digits: 1...2).map { (year, month, $0, words[3]) } }
            }
        } else {
            return nil
        }
        guard let (year, month, day, time) = parsed, day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, let hour = number(clock[0], digits: 2...2), let minute = number(clock[1], digits: 2...2),
            let second = number(clock[2], digits: 2...2), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = self.days(fromYear: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// A number of `digits` ASCII digits.
    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(text)
    }

    /// A month's number (1 for `Jan`) from its three-letter name.
    private static func month(_ text: Substring) -> Int? { months.firstIndex(of: String(text)).map { $0 + 1 } }

    private static func daysIn(month: Int, year: Int) -> Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (the civil-date
    /// algorithms of Howard Hinnant's `chrono` notes).
    static func days(fromYear year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let m = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * m + 2) / 5 + 1
        let month = m < 10 ? m + 3 : m - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
