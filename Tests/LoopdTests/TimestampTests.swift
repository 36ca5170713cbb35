import Foundation
import Testing
@testable import LoopdProtocol

/// RFC 3339 times on the wire (`submitted_at`, `jobs`' `since`): what
/// `Timestamp.format` writes and what `Timestamp.parse` accepts.
@Suite struct TimestampTests {
    /// Instants worked out independently (Python's datetime), with their
    /// UTC spelling.
    static let known: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (1_795_503_662_345, "2026-11-24T07:01:02.345Z"),
        (1_709_208_000_000, "2024-02-29T12:00:00.000Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),
        (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
        (-2_208_988_800_000, "1900-01-01T00:00:00.000Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
        (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ]

    @Test("format: UTC, three fraction digits, Z; the epoch, before it, leap days, 2100")
    func formatsKnownInstants() {
        for (ms, text) in Self.known {
            #expect(Timestamp.format(unixMilliseconds: ms) == text, "\(ms)")
        }
    }

    @Test("parse: the same instants back")
    func parsesKnownInstants() {
        for (ms, text) in Self.known {
            #expect(Timestamp.parse(text) == ms, "\(text)")
        }
    }

    @Test("parse: offsets east and west of UTC, -00:00, lower-case t and z")
    func offsets() {
        let instant: Int64 = 1_795_503_662_345
        #expect(Timestamp.parse("2026-11-24T08:01:02.345+01:00") == instant)
        #expect(Timestamp.parse("2026-11-24T01:31:02.345-05:30") == instant)
        #expect(Timestamp.parse("2026-11-25T06:00:02.345+22:59") == instant)
        #expect(Timestamp.parse("2026-11-23T07:02:02.345-23:59") == instant)
        #expect(Timestamp.parse("2026-11-24T07:01:02.345-00:00") == instant)
        #expect(Timestamp.parse("2026-11-24T07:01:02.345+00:00") == instant)
        #expect(Timestamp.parse("2026-11-24t07:01:02.345z") == instant)
        // A negative offset across midnight and the epoch.
        #expect(Timestamp.parse("1970-01-01T00:00:00-00:30") == 1_800_000)
        #expect(Timestamp.parse("1970-01-01T00:00:00+00:30") == -1_800_000)
        // Across a year end.
        #expect(Timestamp.parse("2026-12-31T23:30:00-01:00") == Timestamp.parse("2027-01-01T00:30:00Z"))
    }

    @Test("parse: a fraction of 1 to 9 digits, milliseconds rounded down, or none")
    func fractions() {
        let whole: Int64 = 1_795_503_662_000
        #expect(Timestamp.parse("2026-11-24T07:01:02Z") == whole)
        #expect(Timestamp.parse("2026-11-24T07:01:02.3Z") == whole + 300)
        #expect(Timestamp.parse("2026-11-24T07:01:02.34Z") == whole + 340)
        #expect(Timestamp.parse("2026-11-24T07:01:02.345Z") == whole + 345)
        #expect(Timestamp.parse("2026-11-24T07:01:02.3459Z") == whole + 345)
        #expect(Timestamp.parse("2026-11-24T07:01:02.999999999Z") == whole + 999)
        #expect(Timestamp.parse("2026-11-24T07:01:02.000000001+01:00") == whole - 3_600_000)
        // Before the epoch the fraction still counts forward from its second.
        #expect(Timestamp.parse("1969-12-31T23:59:59.9999Z") == -1)
        #expect(Timestamp.parse("2026-11-24T07:01:02.1234567890Z") == nil)
        #expect(Timestamp.parse("2026-11-24T07:01:02.Z") == nil)
    }

    @Test("parse: the calendar is checked (leap years, month lengths, hours, minutes, seconds)")
    func calendarChecks() {
        #expect(Timestamp.parse("2024-02-29T00:00:00Z") != nil)
        #expect(Timestamp.parse("2000-02-29T00:00:00Z") != nil)
        #expect(Timestamp.parse("2026-02-29T00:00:00Z") == nil)
        #expect(Timestamp.parse("2100-02-29T00:00:00Z") == nil)
        #expect(Timestamp.parse("1900-02-29T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-04-31T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-12-31T00:00:00Z") != nil)
        #expect(Timestamp.parse("2026-12-32T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-00-10T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-13-10T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-11-00T00:00:00Z") == nil)
        #expect(Timestamp.parse("2026-11-24T24:00:00Z") == nil)
        #expect(Timestamp.parse("2026-11-24T23:60:00Z") == nil)
        #expect(Timestamp.parse("2026-12-31T23:59:60Z") == nil)
        #expect(Timestamp.parse("2026-11-24T07:01:02+24:00") == nil)
        #expect(Timestamp.parse("2026-11-24T07:01:02+01:60") == nil)
    }

    @Test("parse: garbage, other ISO 8601 forms and text around a time are refused")
    func garbage() {
        for text in [
            "", "Z", "now", "2026-11-24", "07:01:02Z", "2026-11-24T07:01:02", "2026-11-24T07:01Z",
            "2026-11-24 07:01:02Z", "2026-11-24_07:01:02Z", "20261124T070102Z", "2026-11-24T07:01:02+0100",
            "2026-11-24T07:01:02+01", "2026-11-24T07:01:02+1:00", "2026-11-24T07:01:02 +01:00",
            "2026-1-24T07:01:02Z", "2026-11-4T07:01:02Z", "26-11-24T07:01:02Z", "+2026-11-24T07:01:02Z",
            "-2026-11-24T07:01:02Z", "12026-11-24T07:01:02Z", " 2026-11-24T07:01:02Z", "2026-11-24T07:01:02Z ",
            "2026-11-24T07:01:02ZZ", "2026-11-24T07:01:02Z\n", "2026-11-24T07:01:02Z\u{0}", "2026-11-24T07:01:02.+01:00",
            "2026-11-24T07:01:02,345Z", "2026-11-24T07:01:02.34a5Z", "2O26-11-24T07:01:02Z", "2026−11−24T07:01:02Z",
            "٢٠٢٦-11-24T07:01:02Z", "2026-11-24T07:01:02.345Z+01:00", "2026-11-24T07:01:02.345+01:00:00",
            "2026-11-24T07:01:02.123456789+01:000", String(repeating: "9", count: 40),
        ] {
            #expect(Timestamp.parse(text) == nil, "\(text.debugDescription)")
        }
    }

    @Test("parse refuses, and format clamps to, instants outside the years 0000-9999")
    func range() {
        #expect(Timestamp.parse("0000-01-01T00:00:00Z") == Timestamp.minUnixMilliseconds)
        #expect(Timestamp.parse("0000-01-01T00:00:00+00:01") == nil)
        #expect(Timestamp.parse("0000-01-01T00:00:00-00:01") == Timestamp.minUnixMilliseconds + 60_000)
        #expect(Timestamp.parse("9999-12-31T23:59:59.999Z") == Timestamp.maxUnixMilliseconds)
        #expect(Timestamp.parse("9999-12-31T23:59:59.999-00:01") == nil)
        #expect(Timestamp.format(unixMilliseconds: .min) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.format(unixMilliseconds: Timestamp.minUnixMilliseconds - 1) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.format(unixMilliseconds: .max) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.format(unixMilliseconds: Timestamp.maxUnixMilliseconds + 1) == "9999-12-31T23:59:59.999Z")
    }

    @Test("every day from 1600 to 2500 converts both ways, and each is the day after the one before")
    func everyDay() {
        let first = Timestamp.daysSinceEpoch(year: 1600, month: 1, day: 1)
        let last = Timestamp.daysSinceEpoch(year: 2500, month: 12, day: 31)
        var previous = (year: Int64(1599), month: Int64(12), day: Int64(31))
        var failures = 0
        for days in first...last {
            let date = Timestamp.civilDate(daysSinceEpoch: days)
            let expected: (Int64, Int64, Int64)
            if previous.day < Timestamp.daysIn(month: previous.month, year: previous.year) {
                expected = (previous.year, previous.month, previous.day + 1)
            } else if previous.month < 12 {
                expected = (previous.year, previous.month + 1, 1)
            } else {
                expected = (previous.year + 1, 1, 1)
            }
            if date != expected || Timestamp.daysSinceEpoch(year: date.year, month: date.month, day: date.day) != days {
                failures += 1
            }
            previous = date
        }
        #expect(failures == 0)
        #expect(previous == (2500, 12, 31))
    }

    @Test("format agrees with Foundation's calendar, and parse undoes format")
    func agreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        // Whole seconds spread over 1600-9999 (Foundation's calendar is
        // Julian before 1582), with a prime stride so every field varies.
        var seconds: Int64 = -11_676_096_000
        while seconds < 253_402_300_799 {
            let text = Timestamp.format(unixMilliseconds: seconds * 1000)
            let oracle = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(text == String(oracle.dropLast()) + ".000Z", "\(seconds)")
            #expect(Timestamp.parse(text) == seconds * 1000)
            seconds += 7_919_993_617
        }
        // Milliseconds round-trip anywhere in range.
        var ms = Timestamp.minUnixMilliseconds
        while ms <= Timestamp.maxUnixMilliseconds {
            #expect(Timestamp.parse(Timestamp.format(unixMilliseconds: ms)) == ms, "\(ms)")
            ms += 3_155_760_000_123
        }
    }
}
