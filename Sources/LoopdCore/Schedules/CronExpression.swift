/// A classic five-field cron expression: `minute hour day-of-month month
/// day-of-week`, matched against wall-clock time (see `ScheduleWhen.nextSlot`
/// for how a zone's clock changes are handled).
///
/// Each field takes `*`, lists `a,b`, ranges `a-b`, steps `*/n` and
/// `a-b/n`; months take `jan`-`dec` and days of the week `sun`-`sat` in any
/// case, where 0 and 7 are both Sunday. The macros `@hourly`, `@daily`,
/// `@midnight`, `@weekly`, `@monthly`, `@yearly` and `@annually` stand for
/// the usual expressions.
///
/// Day-of-month and day-of-week follow Vixie cron: when both are restricted
/// (neither starts with `*`), a day matches if either does, so
/// `0 12 1 * 1` fires on the 1st and on every Monday. When either starts
/// with `*`, a day must match both (`*/2` in one of them therefore still
/// narrows the days).
struct CronExpression: Sendable, Equatable {
    /// The source, normalized for display: lower case, fields separated by
    /// one space, a macro kept as its name (`@daily`).
    let text: String

    let minutes: CronValues
    let hours: CronValues
    let daysOfMonth: CronValues
    let months: CronValues
    /// Sunday is 0; a 7 in the source is stored as 0.
    let daysOfWeek: CronValues
    /// Whether the day-of-month field starts with `*` (Vixie's rule above).
    let dayOfMonthIsStar: Bool
    /// Whether the day-of-week field starts with `*`.
    let dayOfWeekIsStar: Bool

    private static let macros: [String: String] = [
        "@hourly": "0 * * * *",
        "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
        "@weekly": "0 0 * * 0",
        "@monthly": "0 0 1 * *",
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
    ]

    /// Reads an expression; the error names the field at fault and why.
    init(parsing source: String) throws(ScheduleSpecError) {
        let words = source.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let fieldTexts: [String]
        if words.count == 1, words[0].hasPrefix("@") {
            guard let expansion = Self.macros[words[0]] else {
                let known = Self.macros.keys.sorted().joined(separator: ", ")
                throw ScheduleSpecError(message: "cron \"\(source)\": unknown macro \(words[0]); use one of \(known)")
            }
            text = words[0]
            fieldTexts = expansion.split(separator: " ").map(String.init)
        } else {
            guard words.count == 5 else {
                let what = words.isEmpty ? "is empty" : "has \(words.count) field\(words.count == 1 ? "" : "s")"
                throw ScheduleSpecError(message: "cron \"\(source)\" \(what): write five, "
                    + "minute hour day-of-month month day-of-week, or a macro such as @daily")
            }
            text = words.joined(separator: " ")
            fieldTexts = words
        }
        minutes = try CronField.minute.parse(fieldTexts[0])
        hours = try CronField.hour.parse(fieldTexts[1])
        daysOfMonth = try CronField.dayOfMonth.parse(fieldTexts[2])
        months = try CronField.month.parse(fieldTexts[3])
        daysOfWeek = try CronField.dayOfWeek.parse(fieldTexts[4])
        dayOfMonthIsStar = fieldTexts[2].hasPrefix("*")
        dayOfWeekIsStar = fieldTexts[4].hasPrefix("*")
    }

    /// Whether a date's day fields match, by Vixie's rule (see the type).
    /// - Parameter weekday: 0 for Sunday through 6 for Saturday.
    func matchesDay(dayOfMonth: Int, weekday: Int) -> Bool {
        let byMonthDay = daysOfMonth.contains(dayOfMonth)
        let byWeekday = daysOfWeek.contains(weekday)
        if dayOfMonthIsStar || dayOfWeekIsStar { return byMonthDay && byWeekday }
        return byMonthDay || byWeekday
    }
}
