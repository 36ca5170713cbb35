extension CronField {
    /// The values one field's text allows: a comma-separated list whose
    /// items are `*`, `*/step`, a value, `low-high` or `low-high/step`,
    /// where a value is a number or (month, day-of-week) a three-letter name
    /// in any case. A range may not run backwards; a step runs from 1 to the
    /// field's width. `5/10` is refused rather than guessed at, since crons
    /// disagree on it: `5-59/10` says it plainly.
    func parse(_ text: String) throws(ScheduleSpecError) -> CronValues {
        var values = CronValues()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            try parseItem(Substring(item), into: &values, wholeField: text)
        }
        return values
    }

    private func parseItem(_ item: Substring, into values: inout CronValues, wholeField: String) throws(ScheduleSpecError) {
        func refuse(_ why: String) -> ScheduleSpecError {
            ScheduleSpecError(message: "\(name) \"\(wholeField)\": \(why)")
        }
        if item.isEmpty { throw refuse("an empty item in the list") }
        let parts = item.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count > 2 { throw refuse("\"\(item)\" has more than one /") }
        let base = parts[0]
        var step = 1
        if parts.count == 2 {
            let width = range.count - (sevenIsSunday ? 1 : 0)
            guard let n = Int(parts[1]), (1...width).contains(n) else {
                throw refuse("step \"\(parts[1])\" must be a whole number from 1 to \(width)")
            }
            step = n
        }

        let low: Int, high: Int
        if base == "*" {
            // Day-of-week's * stops at Saturday: 7 would only repeat Sunday.
            (low, high) = (range.lowerBound, sevenIsSunday ? 6 : range.upperBound)
        } else if let dash = base.firstIndex(of: "-") {
            low = try value(base[..<dash], refuse)
            high = try value(base[base.index(after: dash)...], refuse)
            if high < low { throw refuse("the range \(base) runs backwards") }
        } else {
            if parts.count == 2 {
                throw refuse("a step needs * or a range before it: write \(base)-\(range.upperBound)/\(step), not \(item)")
            }
            low = try value(base, refuse)
            high = low
        }
        for v in stride(from: low, through: high, by: step) {
            values.insert(sevenIsSunday && v == 7 ? 0 : v)
        }
    }

    /// A number within the field's range, or one of its names.
    private func value(_ text: Substring, _ refuse: (String) -> ScheduleSpecError) throws(ScheduleSpecError) -> Int {
        if text.isEmpty { throw refuse("a range is missing a value") }
        if text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let number = Int(text), range.contains(number) else {
                throw refuse("\(text) is out of range \(rangeText)")
            }
            return number
        }
        if let index = names.firstIndex(of: text.lowercased()) {
            return firstNamedValue + index
        }
        guard let first = names.first, let last = names.last else { throw refuse("\"\(text)\" is not a number") }
        throw refuse("\"\(text)\" is not a number or a name \(first)-\(last)")
    }
}
