// The four TOML date and time kinds keep their components and print back
// exactly as the document wrote them (the `T`, `t` or space separator, `Z`
// or `z`, and every fractional digit), so a message can quote a value
// without reformatting it. Ranges are checked by the parser, not here.

/// A calendar date, `1979-05-27`.
struct TOMLDate: Hashable, Sendable, CustomStringConvertible {
    var year: Int
    var month: Int
    var day: Int

    init(_ year: Int, _ month: Int, _ day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    var description: String { "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))" }

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
struct TOMLTime: Hashable, Sendable, CustomStringConvertible {
    var hour: Int
    var minute: Int
    var second: Int
    var fraction: String

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

    var description: String {
        "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))" + (fraction.isEmpty ? "" : ".\(fraction)")
    }
}

/// A UTC offset: `Z`, `z` or `±hh:mm`.
struct TOMLOffset: Hashable, Sendable, CustomStringConvertible {
    /// Minutes east of UTC: `+05:30` is 330, `Z` is 0.
    var minutes: Int
    /// The offset as written, so `-00:00` stays distinct from `Z`.
    var description: String

    static let utc = TOMLOffset(minutes: 0, description: "Z")
}

/// A date and a time without an offset, `1979-05-27T07:32:00`.
struct TOMLLocalDateTime: Hashable, Sendable, CustomStringConvertible {
    var date: TOMLDate
    var time: TOMLTime
    /// `T`, `t` or a space, as written.
    var separator: Character = "T"

    var description: String { "\(date)\(separator)\(time)" }
}

/// A date and a time at a UTC offset, `1979-05-27T07:32:00Z`.
struct TOMLOffsetDateTime: Hashable, Sendable, CustomStringConvertible {
    var date: TOMLDate
    var time: TOMLTime
    var separator: Character = "T"
    var offset: TOMLOffset

    var description: String { "\(date)\(separator)\(time)\(offset)" }
}

/// `value` in decimal with leading zeros up to `width` digits.
private func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
