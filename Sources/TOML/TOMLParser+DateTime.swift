/// Offset date-times, local date-times, local dates and local times
/// (RFC 3339, as TOML 1.0 restricts it: seconds are required, and a space
/// may stand for the `T`). Every field is range-checked, days per month
/// with leap years included.
extension TOMLParser {
    /// At a digit: a date or time when the first digits are followed by the
    /// `-` of a date or the `:` of a time, else a number.
    mutating func parseNumberOrDateTime() throws(TOMLError) -> TOMLValue {
        let digits = (0..<4).prefix { scanner.peek($0).isDigit }.count
        if digits == 2 && scanner.peek(2) == UInt8(ascii: ":") {
            return .localTime(try parseTime())
        }
        if digits == 4 && scanner.peek(4) == UInt8(ascii: "-") {
            return try parseDateAndMaybeTime()
        }
        return try parseNumber()
    }

    /// `1979-05-27`, optionally followed by a time and an offset.
    private mutating func parseDateAndMaybeTime() throws(TOMLError) -> TOMLValue {
        let date = try parseDate()
        let separator = scanner.peek()
        switch separator {
        case UInt8(ascii: "T"), UInt8(ascii: "t"):
            guard scanner.peek(1).isDigit else {
                throw scanner.error(
                    "expected a time (hh:mm:ss) after \"\(Unicode.Scalar(separator))\", found \(scanner.describe(at: scanner.offset + 1))",
                    at: scanner.offset + 1)
            }
        case .space where scanner.peek(1).isDigit && scanner.peek(2).isDigit && scanner.peek(3) == UInt8(ascii: ":"):
            break
        default:
            return .localDate(date)
        }
        scanner.advance()
        let time = try parseTime()
        let separatorCharacter = Character(Unicode.Scalar(separator))
        guard let offset = try parseOffset() else {
            return .localDateTime(TOMLLocalDateTime(date: date, time: time, separator: separatorCharacter))
        }
        return .offsetDateTime(TOMLOffsetDateTime(date: date, time: time, separator: separatorCharacter, offset: offset))
    }

    /// `YYYY-MM-DD`.
    private mutating func parseDate() throws(TOMLError) -> TOMLDate {
        let start = scanner.offset
        let year = try fixedDigits(4, "a date as YYYY-MM-DD")
        try expect(UInt8(ascii: "-"), "a date as YYYY-MM-DD")
        let month = try fixedDigits(2, "a date as YYYY-MM-DD")
        try expect(UInt8(ascii: "-"), "a date as YYYY-MM-DD")
        let day = try fixedDigits(2, "a date as YYYY-MM-DD")
        guard (1...12).contains(month) else {
            throw scanner.error("invalid date: the month must be 01 to 12, got \(month)", at: start + 5)
        }
        let days = TOMLDate.days(inMonth: month, year: year)
        guard (1...days).contains(day) else {
            throw scanner.error("invalid date: day \(day) does not exist in month \(month) of \(year)", at: start + 8)
        }
        return TOMLDate(year, month, day)
    }

    /// `hh:mm:ss` with an optional fraction, `.999999`.
    private mutating func parseTime() throws(TOMLError) -> TOMLTime {
        let start = scanner.offset
        let format = "a time as hh:mm:ss (TOML 1.0 requires the seconds)"
        let hour = try fixedDigits(2, format)
        try expect(UInt8(ascii: ":"), format)
        let minute = try fixedDigits(2, format)
        try expect(UInt8(ascii: ":"), format)
        let second = try fixedDigits(2, format)
        guard hour <= 23 else { throw scanner.error("invalid time: the hour must be 00 to 23, got \(hour)", at: start) }
        guard minute <= 59 else {
            throw scanner.error("invalid time: the minute must be 00 to 59, got \(minute)", at: start + 3)
        }
        // 60 is a leap second, which RFC 3339 allows.
        guard second <= 60 else {
            throw scanner.error("invalid time: the second must be 00 to 60, got \(second)", at: start + 6)
        }
        var fraction = ""
        if scanner.peek() == UInt8(ascii: ".") {
            guard scanner.peek(1).isDigit else {
                throw scanner.error(
                    "expected digits after the decimal point of the seconds, found \(scanner.describe(at: scanner.offset + 1))",
                    at: scanner.offset + 1)
            }
            scanner.advance()
            let digitsStart = scanner.offset
            while scanner.peek().isDigit { scanner.advance() }
            fraction = String(decoding: scanner.bytes[digitsStart..<scanner.offset], as: UTF8.self)
        }
        return TOMLTime(hour, minute, second, fraction: fraction)
    }

    /// `Z`, `z` or `±hh:mm` after a time, or nil when there is none.
    private mutating func parseOffset() throws(TOMLError) -> TOMLOffset? {
        let start = scanner.offset
        switch scanner.peek() {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            scanner.advance()
            return TOMLOffset(minutes: 0, description: String(Unicode.Scalar(scanner.bytes[start])))
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let format = "a UTC offset as Z or ±hh:mm"
            scanner.advance()
            let hours = try fixedDigits(2, format)
            try expect(UInt8(ascii: ":"), format)
            let minutes = try fixedDigits(2, format)
            guard hours <= 23 && minutes <= 59 else {
                throw scanner.error("invalid UTC offset: hours must be 00 to 23 and minutes 00 to 59", at: start)
            }
            let sign = scanner.bytes[start] == UInt8(ascii: "-") ? -1 : 1
            let text = String(decoding: scanner.bytes[start..<scanner.offset], as: UTF8.self)
            return TOMLOffset(minutes: sign * (hours * 60 + minutes), description: text)
        default:
            return nil
        }
    }

    /// Exactly `count` decimal digits.
    private mutating func fixedDigits(_ count: Int, _ format: String) throws(TOMLError) -> Int {
        var value = 0
        for _ in 0..<count {
            let c = scanner.peek()
            guard c.isDigit else { throw scanner.error("expected \(format), found \(scanner.describe(at: scanner.offset))") }
            value = value * 10 + Int(c &- UInt8(ascii: "0"))
            scanner.advance()
        }
        return value
    }

    private mutating func expect(_ byte: UInt8, _ format: String) throws(TOMLError) {
        guard scanner.peek() == byte else {
            throw scanner.error("expected \(format), found \(scanner.describe(at: scanner.offset))")
        }
        scanner.advance()
    }
}
