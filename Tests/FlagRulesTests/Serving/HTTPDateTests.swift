import Foundation
import Testing

@testable import FlagRules

/// HTTP dates written and read by hand agree with Foundation's `DateFormatter` (the plain
/// way, which a server cannot afford on every answer) on random dates in all three forms,
/// and refuse what is none of them.
@Suite struct HTTPDateTests {
    static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }

    @Test func randomDatesAgreeWithDateFormatter() async {
        await offThePool(computing: true) {
            let imf = Self.formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
            let asctime = Self.formatter("EEE MMM d HH:mm:ss yyyy")
            let rfc850 = Self.formatter("EEEE, dd-MMM-yy HH:mm:ss 'GMT'")
            let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
            var random = SeededGenerator(seed: 7)
            for _ in 0..<5_000 {
                // 1906 to 2191, with a fraction of a second that is dropped.
                let seconds = Int(random.next() % 9_000_000_000) - 2_000_000_000
                let date = Date(timeIntervalSince1970: Double(seconds) + Double(random.next() % 1_000) / 1_000)
                let whole = Date(timeIntervalSince1970: Double(seconds))
                let written = HTTPDate.format(date)
                #expect(written == imf.string(from: whole), "\(seconds)")
                #expect(HTTPDate.parse(written) == whole, "\(written)")
                // asctime pads a one-digit day with a space.
                let old = asctime.string(from: whole)
                let padded = old.replacingOccurrences(of: #"^(\w+ \w+) (\d) "#, with: "$1  $2 ", options: .regularExpression)
                #expect(HTTPDate.parse(padded) == whole, "\(padded)")
                #expect(HTTPDate.parse(old) == whole, "\(old)")
                // RFC 850's two-digit year: read within 50 years of now.
                let year = HTTPDate.civil(fromDays: Int((Double(seconds) / 86_400).rounded(.down))).year
                if year > 1976, year <= 2076 {
                    let text = rfc850.string(from: whole)
                    #expect(HTTPDate.parse(text, now: now) == whole, "\(text)")
                }
            }
        }
    }

    @Test func theRFCsExamples() {
        let date = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.format(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == date)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Date(timeIntervalSince1970: 1_795_000_000)) == date)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == date)
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT") == Date(timeIntervalSince1970: 1_709_208_000))
    }

    @Test(arguments: [
        "", "garbage", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 EST", "Sun, 31 Feb 2026 08:49:37 GMT",
        "Sun, 29 Feb 2025 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:60 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 6a Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov +994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 06-Nov 08:49:37 GMT",
        "Sun Nov 6 08:49:37", "Sun Nov 32 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " ", count: 40),
        "1794999999",
    ])
    func refusesWhatIsNoHTTPDate(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
