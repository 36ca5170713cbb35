import LoopdProtocol

extension CronExpression {
    /// The first wall-clock minute at or after `start` that the expression
    /// matches, both in wall seconds (see `ZoneOffsets.wallSeconds`); nil if
    /// none begins before day `endDay` (days since 1970-01-01).
    ///
    /// The walk skips by field rather than by minute: a month that does not
    /// match is passed in one step, a day that does not match in one step,
    /// and within a matching day the hour and minute are looked up in the
    /// fields' bit sets. A year costs at most a few hundred steps.
    func firstMatch(atOrAfterWall start: Int64, beforeDay endDay: Int64) -> Int64? {
        var dayNumber = floorDivide(start + 59, 86_400)
        let secondOfDay = start + 59 - dayNumber * 86_400
        var (hour, minute) = (Int(secondOfDay / 3600), Int(secondOfDay % 3600 / 60))
        var date = Timestamp.civilDate(daysSinceEpoch: dayNumber)

        while dayNumber < endDay {
            let monthLength = Timestamp.daysIn(month: date.month, year: date.year)
            if !months.contains(Int(date.month)) {
                dayNumber += monthLength - date.day + 1
                date = date.month == 12 ? (date.year + 1, 1, 1) : (date.year, date.month + 1, 1)
                (hour, minute) = (0, 0)
                continue
            }
            let weekday = Int(floorModulo(dayNumber + 4, 7))  // 1970-01-01 was a Thursday
            if matchesDay(dayOfMonth: Int(date.day), weekday: weekday),
               let (h, m) = firstTime(atOrAfterHour: hour, minute: minute) {
                return dayNumber * 86_400 + Int64(h) * 3600 + Int64(m) * 60
            }
            dayNumber += 1
            date = date.day < monthLength ? (date.year, date.month, date.day + 1)
                : date.month == 12 ? (date.year + 1, 1, 1) : (date.year, date.month + 1, 1)
            (hour, minute) = (0, 0)
        }
        return nil
    }

    /// The first matching time of day at or after `hour:minute`, if any.
    private func firstTime(atOrAfterHour hour: Int, minute: Int) -> (Int, Int)? {
        if hours.contains(hour), let m = minutes.first(atOrAbove: minute) { return (hour, m) }
        guard let h = hours.first(atOrAbove: hour + 1), let m = minutes.first(atOrAbove: 0) else { return nil }
        return (h, m)
    }
}
