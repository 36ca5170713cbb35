/// RFC 3339 timestamps (`2026-11-24T07:01:02.345Z`) to and from Unix time
/// in milliseconds, by calendar arithmetic alone: the daemon does not link
/// Foundation, and the wire needs nothing but the proleptic Gregorian
/// calendar in UTC.
public enum Timestamp {
    /// The earliest instant `format` spells: `0000-01-01T00:00:00.000Z`.
    public static let minUnixMilliseconds: Int64 = -62_167_219_200_000
    /// The latest instant `format` spells: `9999-12-31T23:59:59.999Z`.
    public static let maxUnixMilliseconds: Int64 = 253_402_300_799_999

    private static let msPerDay: Int64 = 86_400_000

    /// The instant as UTC with exactly three fraction digits and `Z`, for
    /// example `2026-11-24T07:01:02.345Z`. RFC 3339 has four-digit years
    /// only, so an instant outside years 0000…9999 is spelled as the nearest
    /// one inside them.
    public static func format(unixMilliseconds: Int64) -> String {
        let ms = min(max(unixMilliseconds, minUnixMilliseconds), maxUnixMilliseconds)
        let days = floorDivide(ms, msPerDay)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let inDay = ms - days * msPerDay
        var out: [UInt8] = []
        out.reserveCapacity(24)
        appendDigits(year, 4, &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(month, 2, &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(day, 2, &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(inDay / 3_600_000, 2, &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(inDay / 60_000 % 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(inDay / 1000 % 60, 2, &out)
        out.append(UInt8(ascii: "."))
        appendDigits(inDay % 1000, 3, &out)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The instant an RFC 3339 date-time names, in Unix milliseconds, or nil
    /// when `text` is not one.
    ///
    /// Accepted: `YYYY-MM-DDTHH:MM:SS`, then an optional fraction of 1 to 9
    /// digits, then `Z` or an offset `+hh:mm` / `-hh:mm` (RFC 3339 allows
    /// `t` and `z` in lower case too). Digits beyond the millisecond are
    /// dropped. Everything else is refused: a date that does not exist
    /// (`2026-02-29`), hour 24, second 60 (Unix time has no leap seconds),
    /// a missing offset, spaces, signs or text around it, and an instant
    /// outside the years 0000…9999 in UTC (`0000-01-01T00:00:00+01:00`), so
    /// that every instant `parse` returns, `format` spells exactly.
    public static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8(parse)
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        // "YYYY-MM-DDTHH:MM:SS" is 19 bytes; ".fffffffff" and "+hh:mm" at most 16 more.
        guard b.count >= 20, b.count <= 35 else { return nil }
        guard let year = digits(b, 0, 4), b[4] == UInt8(ascii: "-"),
              let month = digits(b, 5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(b, 8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              let hour = digits(b, 11, 2), b[13] == UInt8(ascii: ":"),
              let minute = digits(b, 14, 2), b[16] == UInt8(ascii: ":"),
              let second = digits(b, 17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }

        var i = 19
        var fractionMs: Int64 = 0
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, let d = digit(b[i]) {
                // Only the first three digits count: milliseconds, rounded down.
                if i - start < 3 { fractionMs = fractionMs * 10 + d }
                i += 1
            }
            let count = i - start
            guard (1...9).contains(count) else { return nil }
            for _ in count..<max(count, 3) { fractionMs *= 10 }
        }

        guard i < b.count else { return nil }
        var offsetMs: Int64 = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard b.count - i == 6, let oh = digits(b, i + 1, 2), b[i + 3] == UInt8(ascii: ":"),
                  let om = digits(b, i + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offsetMs = (oh * 60 + om) * 60_000
            if b[i] == UInt8(ascii: "-") { offsetMs = -offsetMs }
            i += 6
        default:
            return nil
        }
        guard i == b.count else { return nil }

        let days = daysSinceEpoch(year: year, month: month, day: day)
        let local = days * msPerDay + ((hour * 60 + minute) * 60 + second) * 1000 + fractionMs
        // The local time is ahead of UTC by the offset. An offset can carry
        // a date in year 0000 or 9999 out of the years `format` spells.
        let utc = local - offsetMs
        return (minUnixMilliseconds...maxUnixMilliseconds).contains(utc) ? utc : nil
    }

    // MARK: calendar
    // `package`: LoopdCore's schedules walk the same calendar.

    /// Days in `month` of `year` (proleptic Gregorian).
    package static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Every fourth year, except centuries not divisible by 400.
    static func isLeap(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    // Both conversions count years from March: the leap day is then the
    // last day of its year, so a day's place in the year does not depend on
    // whether the year is a leap year. Month lengths from March repeat
    // 31 30 31 30 31 in blocks of 153 days, so the first day of the m-th
    // month after March is day (153 * m + 2) / 5 of that year. A 400-year
    // era is 146 097 days long, and 1970-01-01 is day 719 468 counted from
    // 0000-03-01.

    private static let daysPerEra: Int64 = 146_097
    private static let epochFromMarchZero: Int64 = 719_468

    /// Days from 1970-01-01 to the given date.
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = floorDivide(marchYear, 400)
        let yearOfEra = marchYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * daysPerEra + dayOfEra - epochFromMarchZero
    }

    /// The date `days` after 1970-01-01.
    package static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let fromMarchZero = days + epochFromMarchZero
        let era = floorDivide(fromMarchZero, daysPerEra)
        let dayOfEra = fromMarchZero - era * daysPerEra
        // The leap days before dayOfEra, taken out, leave whole 365-day years.
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / (daysPerEra - 1)) / 365
        let dayOfYear = dayOfEra - (yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = era * 400 + yearOfEra + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    // MARK: digits

    private static func digit(_ byte: UInt8) -> Int64? {
        byte >= 0x30 && byte <= 0x39 ? Int64(byte - 0x30) : nil
    }

    /// The decimal number in exactly `count` digits at `start`.
    private static func digits(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for k in start..<(start + count) {
            guard let d = digit(b[k]) else { return nil }
            value = value * 10 + d
        }
        return value
    }

    private static func appendDigits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
