/// The values one cron field allows, one bit per value. Every field's
/// values lie in 0...59, so a 64-bit word holds any of them, and "the next
/// allowed value" is one mask and one count of trailing zeros.
struct CronValues: Sendable, Equatable {
    /// Bit v is set when the field allows value v.
    private(set) var bits: UInt64 = 0

    /// Whether the field allows `value`; false for values outside 0...63.
    func contains(_ value: Int) -> Bool {
        (0..<64).contains(value) && bits & (1 << UInt64(value)) != 0
    }

    /// Allows `value`, which must lie in 0...63 (the parser checks ranges first).
    mutating func insert(_ value: Int) {
        precondition((0..<64).contains(value), "a cron value lies in 0...63, got \(value)")
        bits |= 1 << UInt64(value)
    }

    /// The smallest allowed value that is `value` or more, or nil if none is.
    func first(atOrAbove value: Int) -> Int? {
        guard value < 64 else { return nil }
        let remaining = bits & (UInt64.max << UInt64(max(value, 0)))
        return remaining == 0 ? nil : remaining.trailingZeroBitCount
    }
}

/// One of the five fields of a cron expression: its name in messages, the
/// values it accepts and the names that stand for some of them.
struct CronField: Sendable {
    /// How error messages call the field: `minute`, `day-of-week`.
    let name: String
    /// The numbers the field accepts. Day-of-week accepts 7 too, as Sunday.
    let range: ClosedRange<Int>
    /// Three-letter names, lower case, for the values from `firstNamedValue` on.
    let names: [String]
    let firstNamedValue: Int
    /// Day-of-week's 7 is a second spelling of Sunday and is stored as 0,
    /// so matching a date looks in one place.
    let sevenIsSunday: Bool

    init(name: String, range: ClosedRange<Int>, names: [String] = [], firstNamedValue: Int = 0,
         sevenIsSunday: Bool = false) {
        self.name = name
        self.range = range
        self.names = names
        self.firstNamedValue = firstNamedValue
        self.sevenIsSunday = sevenIsSunday
    }

    static let minute = CronField(name: "minute", range: 0...59)
    static let hour = CronField(name: "hour", range: 0...23)
    static let dayOfMonth = CronField(name: "day-of-month", range: 1...31)
    static let month = CronField(
        name: "month", range: 1...12,
        names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
        firstNamedValue: 1)
    static let dayOfWeek = CronField(
        name: "day-of-week", range: 0...7,
        names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"], sevenIsSunday: true)

    /// The field's values as written in messages: `0-59`, `0-7 or sun-sat`.
    var rangeText: String {
        let numbers = "\(range.lowerBound)-\(range.upperBound)"
        guard let first = names.first, let last = names.last else { return numbers }
        return "\(numbers) or \(first)-\(last)"
    }
}
