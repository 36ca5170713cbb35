/// The length of one term's unit, in milliseconds. Lower case only, so
/// that `5M` is refused rather than read as minutes or months.
private let unitMilliseconds: [String: Int64] = [
    "ms": 1,
    "s": 1_000,
    "m": 60_000, "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
]

private let unitList = "ms, s, m, min, h, d or w"

/// Reads a schedule's duration (`90s`, `5m`, `1h30m`, `1h 30m`, `2d`,
/// `500ms`, `1w`) as milliseconds.
///
/// The text is a sum of terms, each an unsigned integer written directly
/// before its unit; spaces may separate terms and surround the whole. A day
/// is always 86 400 s (a duration is elapsed time, not calendar time). The
/// sum must be greater than zero and fit in `Int64` milliseconds.
func parseScheduleDuration(_ text: String) throws(ScheduleSpecError) -> Int64 {
    func refuse(_ why: String) -> ScheduleSpecError {
        ScheduleSpecError(message: "duration \"\(text)\": \(why)")
    }
    let chars = Array(text)
    var i = 0
    func skipSpaces() { while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 } }

    skipSpaces()
    if i == chars.count {
        throw ScheduleSpecError(message: "empty duration: write a number and a unit, e.g. 90s, 5m or 1h30m")
    }
    var total: Int64 = 0
    while i < chars.count {
        if chars[i] == "-" { throw refuse("a duration cannot be negative") }
        guard chars[i].isASCII, chars[i].isNumber else {
            throw refuse("expected a number at \"\(String(chars[i...]))\"")
        }
        let numberStart = i
        var amount: Int64 = 0
        var overflow = false
        while i < chars.count, chars[i].isASCII, let digit = chars[i].wholeNumberValue {
            let (times10, o1) = amount.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(digit))
            overflow = overflow || o1 || o2
            amount = sum
            i += 1
        }
        let unitStart = i
        while i < chars.count, chars[i].isLetter { i += 1 }  // any script, so `5µs` names its unit
        let unit = String(chars[unitStart..<i])
        if unit.isEmpty {
            if unitStart < chars.count, chars[unitStart] == "." {
                throw refuse("use whole numbers, e.g. 1h30m rather than 1.5h")
            }
            let number = String(chars[numberStart..<unitStart])
            throw refuse("\(number) has no unit: write one of \(unitList) directly after it")
        }
        guard let scale = unitMilliseconds[unit] else {
            throw refuse("unknown unit \"\(unit)\": use \(unitList)")
        }
        let (term, o3) = amount.multipliedReportingOverflow(by: scale)
        let (sum, o4) = total.addingReportingOverflow(term)
        if overflow || o3 || o4 { throw refuse("too long: at most \(Int64.max / 604_800_000)w") }
        total = sum
        skipSpaces()
    }
    if total == 0 { throw refuse("must be greater than zero") }
    return total
}

/// Spells milliseconds the way `parseScheduleDuration` reads them, largest
/// units first and without zero terms: 90 000 → `1m30s`, 86 400 000 → `1d`.
func formatScheduleDuration(_ milliseconds: Int64) -> String {
    if milliseconds <= 0 { return "\(milliseconds)ms" }
    var rest = milliseconds
    var text = ""
    for (unit, scale) in [("w", Int64(604_800_000)), ("d", 86_400_000), ("h", 3_600_000),
                          ("m", 60_000), ("s", 1_000), ("ms", 1)] where rest >= scale {
        text += "\(rest / scale)\(unit)"
        rest %= scale
    }
    return text
}
