// The four TOML date and time kinds keep their components and print back
// exactly as the document wrote them (the `T`, `t` or space separator, `Z`
// or `z`, and every fractional digit), so a message can quote a value
// without reformatting it. Ranges are checked by the parser, not here.

/// A calendar date, `1979-05-27`.
public struct TOMLDate: Hashable, Sendable, CustomStringConvertible {
    /// The year, 0 to 9999.
    public var year: Int
    /// The month, 1 to 12.
    public var month: Int
    /// The day of the month, from 1.
    public var day: Int

    init(_ year: Int, _ month: Int, _ day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// As the document wrote it.
    public var description: String { "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))" }

    /// The number of days in `month` of `year` in the proleptic Gregorian calendar.
    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// A time of day, `07:32:00.999999`. `fraction` holds the digits after the
/// point exactly as written ("" when there is none), so no precision is lost
/// or invented; `nanosecond` reads the first nine of them.
public struct TOMLTime: Hashable, Sendable, CustomStringConvertible {
    /// The hour, 0 to 23.
    public var hour: Int
    /// The minute, 0 to 59.
    public var minute: Int
    /// The second, 0 to 60 (a leap second).
    public var second: Int
    /// The fractional digits as written, without the dot; empty when none.
    public var fraction: String

    init(_ hour: Int, _ minute: Int, _ second: Int, fraction: String = "") {
        self.hour = hour
        self.minute = minute
        self.second = second
        self.fraction = fraction
    }

    /// The fraction in nanoseconds; digits past the ninth are truncated, as TOML asks.
    var nanosecond: Int {
        var value = 0
        var scale = 100_000_000
        for digit in fraction.utf8.prefix(9) {
            value += Int(digit &- UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return value
    }

    /// As the document wrote it.
    public var description: String {
        "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))" + (fraction.isEmpty ? "" : ".\(fraction)")
    }
}

/// A UTC offset: `Z`, `z` or `±hh:mm`.
public struct TOMLOffset: Hashable, Sendable, CustomStringConvertible {
    /// Minutes east of UTC: `+05:30` is 330, `Z` is 0.
    public var minutes: Int
    /// The offset as written, so `-00:00` stays distinct from `Z`.
    /// As the document wrote it.
    public var description: String

    static let utc = TOMLOffset(minutes: 0, description: "Z")
}

/// A date and a time without an offset, `1979-05-27T07:32:00`.
public struct TOMLLocalDateTime: Hashable, Sendable, CustomStringConvertible {
    /// The date part.
    public var date: TOMLDate
    /// The time part.
    public var time: TOMLTime
    /// `T`, `t` or a space, as written.
    /// What stood between date and time: `T`, `t` or a space.
    public var separator: Character = "T"

    /// As the document wrote it.
    public var description: String { "\(date)\(separator)\(time)" }
}

/// A date and a time at a UTC offset, `1979-05-27T07:32:00Z`.
public struct TOMLOffsetDateTime: Hashable, Sendable, CustomStringConvertible {
    /// The date part.
    public var date: TOMLDate
    /// The time part.
    public var time: TOMLTime
    /// What stood between date and time: `T`, `t` or a space.
    public var separator: Character = "T"
    /// The offset from UTC.
    public var offset: TOMLOffset

    /// As the document wrote it.
    public var description: String { "\(date)\(separator)\(time)\(offset)" }
}

/// `value` in decimal with leading zeros up to `width` digits.
private func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
