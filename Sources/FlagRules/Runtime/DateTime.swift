import Foundation

/// ISO 8601 datetimes as the language reads them: `2026-03-31` (midnight UTC),
/// `2026-03-31T09:30`, `2026-03-31T09:30:00.250Z`, `2026-03-31T09:30:00+02:00`.
/// A time without an offset is UTC.
package enum DateTime {
    /// Parses an ISO 8601 date or datetime; nil when it is not one.
    package static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// Parses a date alone (`YYYY-MM-DD`).
    package static func parseDate(_ text: String) -> Date? {
        guard text.utf8.count == 10 else { return nil }
        return parse(text)
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Date? {
        let n = b.count
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= n else { return nil }
            var v = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += count
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < n, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else {
            return nil
        }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        var seconds = Double(daysFromCivil(year: year, month: month, day: day) * 86_400)
        if i == n { return Date(timeIntervalSince1970: seconds) }
        guard b[i] == 0x54 || b[i] == 0x74 || b[i] == 0x20 else { return nil }  // T, t or space
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), hour < 24, minute < 60 else { return nil }
        var second = 0
        var fraction = 0.0
        if expect(0x3A) {
            guard let s = digits(2), s < 60 else { return nil }
            second = s
            if i < n, b[i] == 0x2E || b[i] == 0x2C {
                i += 1
                var scale = 0.1
                let start = i
                while i < n, b[i] >= 0x30, b[i] <= 0x39, i - start < 9 {
                    fraction += Double(b[i] - 0x30) * scale
                    scale /= 10
                    i += 1
                }
                guard i > start else { return nil }
            }
        }
        seconds += Double(hour * 3600 + minute * 60 + second) + fraction
        if i == n { return Date(timeIntervalSince1970: seconds) }
        if b[i] == 0x5A || b[i] == 0x7A {  // Z
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            let sign = b[i] == 0x2B ? 1.0 : -1.0
            i += 1
            guard let oh = digits(2), oh < 24 else { return nil }
            var om = 0
            if expect(0x3A) {
                guard let m = digits(2) else { return nil }
                om = m
            } else if let m = digits(2) {
                om = m
            }
            guard om < 60 else { return nil }
            seconds -= sign * Double(oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == n else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (with milliseconds when there are any), in UTC.
    package static func format(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        // Years 0000–9999 only: anything else (a Date from arithmetic gone wrong) is shown as such.
        guard t.isFinite, t >= -62_167_219_200, t < 253_402_300_800 else { return "out-of-range date \(t)" }
        let whole = t.rounded(.down)
        let millis = Int(((t - whole) * 1000).rounded())
        let secs = Int(whole)
        var days = secs / 86_400
        var rem = secs % 86_400
        if rem < 0 { rem += 86_400; days -= 1 }
        let (y, m, d) = HTTPDate.civil(fromDays: days)
        func pad(_ v: Int, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        var out = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(rem / 3600, 2)):\(pad(rem % 3600 / 60, 2)):\(pad(rem % 60, 2))"
        if millis > 0 && millis < 1000 { out += "." + pad(millis, 3) }
        return out + "Z"
    }
}
