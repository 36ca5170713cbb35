import Foundation
import LoopdProtocol
import Testing
@testable import LoopdCore

/// The pure time engine of recurring jobs: durations, cron expressions,
/// next slots in UTC and across daylight-saving changes, the host's zone,
/// and the fixed per-schedule delay.
@Suite struct ScheduleTimeTests {
    // MARK: helpers

    /// An RFC 3339 instant in Unix milliseconds (Timestamp has tests of its own).
    static func at(_ text: String) -> Int64 {
        guard let ms = Timestamp.parse(text) else { preconditionFailure("not an RFC 3339 instant: \(text)") }
        return ms
    }

    static func spelled(_ ms: Int64?) -> String { ms.map { Timestamp.format(unixMilliseconds: $0) } ?? "nil" }

    /// The next slot of a UTC cron expression after `instant`.
    static func utcSlot(_ cron: String, after instant: String) throws -> Int64? {
        ScheduleWhen.cron(try CronExpression(parsing: cron), zone: .utc).nextSlot(after: at(instant), offsets: .utc)
    }

    /// The message a failed parse gives, or nil if it parsed.
    static func durationError(_ text: String) -> String? {
        do { _ = try parseScheduleDuration(text); return nil } catch { return error.message }
    }

    static func cronError(_ text: String) -> String? {
        do { _ = try CronExpression(parsing: text); return nil } catch { return error.message }
    }

    static func members(_ values: CronValues) -> [Int] { (0..<64).filter(values.contains) }

    // MARK: every

    @Test("every: slots lie on the period's grid from the epoch; strictly after a slot gives the next")
    func everyFollowsTheEpochGrid() {
        let fiveMinutes = ScheduleWhen.every(milliseconds: 300_000)
        #expect(fiveMinutes.nextSlot(after: Self.at("2026-03-06T12:03:10Z"), offsets: .utc) == Self.at("2026-03-06T12:05:00Z"))
        #expect(fiveMinutes.nextSlot(after: Self.at("2026-03-06T12:05:00Z"), offsets: .utc) == Self.at("2026-03-06T12:10:00Z"))
        #expect(fiveMinutes.nextSlot(after: Self.at("2026-03-06T12:04:59.999Z"), offsets: .utc) == Self.at("2026-03-06T12:05:00Z"))
        // Before the epoch the grid continues: the slot after -1 ms is 0.
        let hourly = ScheduleWhen.every(milliseconds: 3_600_000)
        #expect(hourly.nextSlot(after: -1, offsets: .utc) == 0)
        #expect(hourly.nextSlot(after: -3_600_001, offsets: .utc) == -3_600_000)
        // A week's grid starts on the epoch's Thursday, and no zone moves it.
        let berlinLike = ZoneOffsets(name: "+01:00") { _ in 3600 }
        #expect(ScheduleWhen.every(milliseconds: 604_800_000).nextSlot(after: Self.at("2026-07-01T00:00:00Z"), offsets: berlinLike)
            == Self.at("2026-07-02T00:00:00Z"))
        // A slot beyond Int64 is none.
        #expect(ScheduleWhen.every(milliseconds: 1).nextSlot(after: .max, offsets: .utc) == nil)
    }

    @Test("description: every in duration units, cron with its zone")
    func descriptions() throws {
        #expect(ScheduleWhen.every(milliseconds: 300_000).description == "every 5m")
        #expect(ScheduleWhen.every(milliseconds: 5_400_500).description == "every 1h30m500ms")
        #expect(ScheduleWhen.cron(try CronExpression(parsing: "0 9 * * MON-FRI"), zone: .local).description
            == "cron 0 9 * * mon-fri (local)")
        #expect(ScheduleWhen.cron(try CronExpression(parsing: "@Daily"), zone: .utc).description == "cron @daily (UTC)")
    }

    // MARK: durations

    @Test("duration: integer+unit terms summed, spaces between terms, every unit")
    func durationForms() throws {
        let cases: [(String, Int64)] = [
            ("90s", 90_000), ("5m", 300_000), ("5min", 300_000), ("1h30m", 5_400_000), ("1h 30m", 5_400_000),
            (" 2d ", 172_800_000), ("500ms", 500), ("1w", 604_800_000), ("1m30s500ms", 90_500), ("05s", 5_000),
        ]
        for (text, ms) in cases {
            #expect(try parseScheduleDuration(text) == ms, "\(text)")
            // What format writes, parse reads back.
            #expect(try parseScheduleDuration(formatScheduleDuration(ms)) == ms, "\(text)")
        }
    }

    @Test("duration: each refusal says what is wrong")
    func durationErrors() {
        let cases: [(String, String)] = [
            ("", "empty duration"),
            ("   ", "empty duration"),
            ("5", "5 has no unit"),
            ("1h5", "5 has no unit"),
            ("5 m", "5 has no unit"),
            ("5x", "unknown unit \"x\""),
            ("5M", "unknown unit \"M\""),
            ("5µs", "unknown unit \"µs\""),
            ("0s", "greater than zero"),
            ("0h0m", "greater than zero"),
            ("-1m", "cannot be negative"),
            ("1.5h", "whole numbers"),
            ("h", "expected a number at \"h\""),
            ("99999999999999999999s", "too long"),
            ("20000000000w", "too long"),
            ("9223372036854775807ms 1ms", "too long"),
        ]
        for (text, fragment) in cases {
            let message = Self.durationError(text)
            #expect(message?.contains(fragment) == true, "\(text): \(message ?? "accepted")")
        }
    }

    // MARK: cron syntax

    @Test("cron: *, lists, ranges, steps, names in any case, 7 as Sunday")
    func cronSyntax() throws {
        let field = { (f: CronField, text: String) throws -> [Int] in Self.members(try f.parse(text)) }
        #expect(try field(.minute, "*") == Array(0...59))
        #expect(try field(.minute, "*/15") == [0, 15, 30, 45])
        #expect(try field(.minute, "1,2,5") == [1, 2, 5])
        #expect(try field(.minute, "10-12") == [10, 11, 12])
        #expect(try field(.minute, "10-20/5,59") == [10, 15, 20, 59])
        #expect(try field(.hour, "*/7") == [0, 7, 14, 21])
        #expect(try field(.dayOfMonth, "*") == Array(1...31))
        #expect(try field(.dayOfMonth, "*/10") == [1, 11, 21, 31])
        #expect(try field(.month, "jan,MAR-May") == [1, 3, 4, 5])
        #expect(try field(.month, "*/3") == [1, 4, 7, 10])
        #expect(try field(.dayOfWeek, "*") == Array(0...6))
        #expect(try field(.dayOfWeek, "Mon-fri") == [1, 2, 3, 4, 5])
        #expect(try field(.dayOfWeek, "7") == [0])
        #expect(try field(.dayOfWeek, "5-7") == [0, 5, 6])
        #expect(try field(.dayOfWeek, "sun,sat") == [0, 6])

        let spaced = try CronExpression(parsing: "  0\t9  * *   MON-FRI ")
        #expect(spaced.text == "0 9 * * mon-fri")
        #expect(Self.members(spaced.minutes) == [0] && Self.members(spaced.hours) == [9])
    }

    @Test("cron: each macro stands for its five fields")
    func cronMacros() throws {
        let expansions = [
            "@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
            "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
        ]
        for (macro, fields) in expansions {
            let a = try CronExpression(parsing: macro.uppercased()), b = try CronExpression(parsing: fields)
            #expect(a.text == macro)
            #expect(a.minutes == b.minutes && a.hours == b.hours && a.daysOfMonth == b.daysOfMonth
                && a.months == b.months && a.daysOfWeek == b.daysOfWeek
                && a.dayOfMonthIsStar == b.dayOfMonthIsStar && a.dayOfWeekIsStar == b.dayOfWeekIsStar, "\(macro)")
        }
    }

    @Test("cron: refusals name the field and what is wrong")
    func cronErrors() {
        let cases: [(String, [String])] = [
            ("60 * * * *", ["minute", "60 is out of range 0-59"]),
            ("0 24 * * *", ["hour", "24 is out of range 0-23"]),
            ("0 0 0 * *", ["day-of-month", "0 is out of range 1-31"]),
            ("0 0 32 * *", ["day-of-month", "32 is out of range 1-31"]),
            ("0 0 1 13 *", ["month", "13 is out of range 1-12"]),
            ("0 0 * * 8", ["day-of-week", "8 is out of range 0-7"]),
            ("99999999999999999999 * * * *", ["minute", "out of range"]),
            ("*/0 * * * *", ["minute", "step \"0\""]),
            ("*/x * * * *", ["minute", "step \"x\""]),
            ("0 */25 * * *", ["hour", "step \"25\" must be a whole number from 1 to 24"]),
            ("0 0 * * 1-5/", ["day-of-week", "step \"\""]),
            ("5/10 * * * *", ["minute", "needs * or a range", "5-59/10"]),
            ("*/2/3 * * * *", ["minute", "more than one /"]),
            ("5-1 * * * *", ["minute", "5-1 runs backwards"]),
            ("1,,2 * * * *", ["minute", "empty item"]),
            ("1- * * * *", ["minute", "missing a value"]),
            ("0 0 * foo *", ["month", "\"foo\" is not a number or a name jan-dec"]),
            ("0 0 * * mon-xyz", ["day-of-week", "\"xyz\""]),
            ("0 0 * * jan", ["day-of-week", "\"jan\""]),
            ("0 mon * * *", ["hour", "\"mon\" is not a number"]),
            ("0 0 1 1 1 1", ["has 6 fields", "five"]),
            ("0 0 1 1", ["has 4 fields"]),
            ("", ["is empty"]),
            ("@reboot", ["unknown macro @reboot"]),
        ]
        for (text, fragments) in cases {
            let message = Self.cronError(text)
            for fragment in fragments {
                #expect(message?.contains(fragment) == true, "\(text): \(message ?? "accepted")")
            }
        }
    }

    // MARK: next slots in UTC

    @Test("cron next slots in UTC, checked by hand")
    func cronNextSlotsUTC() throws {
        let table: [(cron: String, after: String, next: String?)] = [
            // Friday 17:50: past the last 17:45 of the week's hours, on to Monday.
            ("*/15 9-17 * * 1-5", "2026-03-06T17:50:00Z", "2026-03-09T09:00:00Z"),
            ("*/15 9-17 * * 1-5", "2026-03-09T09:00:00Z", "2026-03-09T09:15:00Z"),
            ("*/15 9-17 * * 1-5", "2026-03-09T09:14:59.999Z", "2026-03-09T09:15:00Z"),
            // The next leap day, two years on.
            ("0 0 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"),
            // Vixie: both day fields restricted, so the 1st OR a Monday.
            ("0 12 1 * 1", "2026-07-01T12:00:00Z", "2026-07-06T12:00:00Z"),
            ("0 12 1 * 1", "2026-07-27T12:00:00Z", "2026-08-01T12:00:00Z"),  // a Saturday, by day-of-month
            ("0 12 1 * 1", "2026-08-01T12:00:00Z", "2026-08-03T12:00:00Z"),
            // Day-of-month starts with *, so both must match: odd days that are Mondays.
            ("0 12 */2 * 1", "2026-07-01T12:00:00Z", "2026-07-13T12:00:00Z"),
            ("@weekly", "2026-07-01T12:00:00Z", "2026-07-05T00:00:00Z"),
            ("0 0 * * 7", "2026-07-01T12:00:00Z", "2026-07-05T00:00:00Z"),
            ("@yearly", "2026-12-31T23:59:59.999Z", "2027-01-01T00:00:00Z"),
            ("* * * * *", "2026-03-06T12:03:10.500Z", "2026-03-06T12:04:00Z"),
            ("* * * * *", "2026-03-06T12:04:00Z", "2026-03-06T12:05:00Z"),
            ("59 23 31 12 *", "2026-01-01T00:00:00Z", "2026-12-31T23:59:00Z"),
            ("0 6 * jan,jul sun", "2026-02-01T00:00:00Z", "2026-07-05T06:00:00Z"),
            ("30 4 31 * *", "2026-04-01T00:00:00Z", "2026-05-31T04:30:00Z"),
            // Before the epoch.
            ("0 0 * * *", "1969-12-31T12:00:00Z", "1970-01-01T00:00:00Z"),
            // Never: February has no 30th.
            ("0 0 30 2 *", "2026-01-01T00:00:00Z", nil),
        ]
        for row in table {
            let slot = try Self.utcSlot(row.cron, after: row.after)
            #expect(slot == row.next.map(Self.at), "\(row.cron) after \(row.after): got \(Self.spelled(slot))")
        }
    }

    @Test("cron: the field-skipping search finds exactly the minutes a minute-by-minute walk finds")
    func searchAgreesWithAMinuteWalk() throws {
        let expressions = ["*/7 */5 * * *", "15,45 9-17 1,15 * 1-5", "*/20 3 */3 * mon", "0 0 * mar,apr *",
                           "59 23 31 * *", "0 0 29 2 *", "30 12 * feb 0,6"]
        for start in ["2026-02-20T00:00:00Z", "2028-02-20T00:00:00Z"] {
            let first = Self.at(start) / 60_000
            for text in expressions {
                let cron = try CronExpression(parsing: text)
                var walked: [Int64] = []
                for minute in first..<(first + 40 * 1440) {
                    let day = Timestamp.civilDate(daysSinceEpoch: minute / 1440)
                    let weekday = Int((minute / 1440 + 4) % 7)
                    if cron.minutes.contains(Int(minute % 60)), cron.hours.contains(Int(minute / 60 % 24)),
                       cron.months.contains(Int(day.month)), cron.matchesDay(dayOfMonth: Int(day.day), weekday: weekday) {
                        walked.append(minute * 60_000)
                    }
                }
                var found: [Int64] = []
                var now = Self.at(start) - 1
                let when = ScheduleWhen.cron(cron, zone: .utc)
                while let next = when.nextSlot(after: now, offsets: .utc), next < (first + 40 * 1440) * 60_000 {
                    found.append(next)
                    now = next
                }
                #expect(found == walked, "\(text) from \(start)")
            }
        }
    }

    @Test("cron: a .utc expression reads UTC whatever offsets it is given")
    func utcCronIgnoresOffsets() throws {
        let farEast = ZoneOffsets(name: "+09:00") { _ in 9 * 3600 }
        let daily = try CronExpression(parsing: "0 9 * * *")
        let after = Self.at("2026-03-06T00:00:00Z")
        #expect(ScheduleWhen.cron(daily, zone: .utc).nextSlot(after: after, offsets: farEast) == Self.at("2026-03-06T09:00:00Z"))
        #expect(ScheduleWhen.cron(daily, zone: .local).nextSlot(after: after, offsets: farEast) == Self.at("2026-03-07T00:00:00Z"))
    }

    // MARK: daylight-saving time

    /// Europe/Berlin's offsets from the system's zone data, or nil where it has none.
    static let berlin: ZoneOffsets? = TimeZone(identifier: "Europe/Berlin").map { zone in
        ZoneOffsets(name: "Europe/Berlin") { Int32(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0)))) }
    }

    static func berlinSlots(_ cron: String, after instant: String, count: Int) throws -> [String] {
        let offsets = try #require(berlin)
        let when = ScheduleWhen.cron(try CronExpression(parsing: cron), zone: .local)
        var slots: [String] = []
        var now = at(instant)
        while slots.count < count, let next = when.nextSlot(after: now, offsets: offsets) {
            slots.append(Timestamp.format(unixMilliseconds: next))
            now = next
        }
        return slots
    }

    @Test("DST gap: a skipped wall time fires once, at the end of the gap; several in one gap give one slot",
          .enabled(if: ScheduleTimeTests.berlin != nil, "no zone data for Europe/Berlin"))
    func springForward() throws {
        // 2026-03-29: Berlin goes from 02:00 CET straight to 03:00 CEST, at 01:00Z.
        #expect(try Self.berlinSlots("30 2 * * *", after: "2026-03-28T12:00:00Z", count: 2)
            == ["2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"])
        #expect(try Self.berlinSlots("*/15 2 * * *", after: "2026-03-29T00:00:00Z", count: 2)
            == ["2026-03-29T01:00:00.000Z", "2026-03-30T00:00:00.000Z"])
        // Hourly: wall 02:00 and 03:00 are the same instant, which fires once.
        #expect(try Self.berlinSlots("0 * * * *", after: "2026-03-28T22:00:00Z", count: 5)
            == ["2026-03-28T23:00:00.000Z", "2026-03-29T00:00:00.000Z", "2026-03-29T01:00:00.000Z",
                "2026-03-29T02:00:00.000Z", "2026-03-29T03:00:00.000Z"])
    }

    @Test("DST overlap: a repeated wall time fires once, at its first occurrence",
          .enabled(if: ScheduleTimeTests.berlin != nil, "no zone data for Europe/Berlin"))
    func fallBack() throws {
        // 2026-10-25: Berlin goes from 03:00 CEST back to 02:00 CET, at 01:00Z.
        #expect(try Self.berlinSlots("30 2 * * *", after: "2026-10-24T12:00:00Z", count: 2)
            == ["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"])
        // From inside the second pass, the second 02:30 (01:30Z) is not a slot.
        #expect(try Self.berlinSlots("30 2 * * *", after: "2026-10-25T01:00:00Z", count: 1) == ["2026-10-26T01:30:00.000Z"])
        // Hourly: the second 02:00 (01:00Z) gives no slot.
        #expect(try Self.berlinSlots("0 * * * *", after: "2026-10-24T22:00:00Z", count: 4)
            == ["2026-10-24T23:00:00.000Z", "2026-10-25T00:00:00.000Z", "2026-10-25T02:00:00.000Z",
                "2026-10-25T03:00:00.000Z"])
    }

    @Test("DST: hourly through a whole year is one slot per wall hour, on the hour, never twice",
          .enabled(if: ScheduleTimeTests.berlin != nil, "no zone data for Europe/Berlin"))
    func hourlyThroughAYear() throws {
        let offsets = try #require(Self.berlin)
        let hourly = ScheduleWhen.cron(try CronExpression(parsing: "0 * * * *"), zone: .local)
        let end = Self.at("2026-12-31T23:00:00Z")  // 2027-01-01 00:00 in Berlin
        var now = Self.at("2025-12-31T23:00:00Z")  // 2026-01-01 00:00 in Berlin
        var count = 0
        while let next = hourly.nextSlot(after: now, offsets: offsets), next <= end {
            #expect(next > now)
            let wall = offsets.wallSeconds(at: next / 1000)
            #expect(wall % 3600 == 0, "\(Self.spelled(next)) is not on a Berlin hour")
            now = next
            count += 1
        }
        // 8760 wall hours; the one skipped in spring shares its instant with 03:00.
        #expect(count == 365 * 24 - 1)
    }

    @Test("DST in a half-hour gap, from a zone described by hand")
    func halfHourGap() throws {
        // +10:30, then +11:00 from 2026-10-03T15:30Z (02:00 wall, which jumps to 02:30).
        let change = Self.at("2026-10-03T15:30:00Z") / 1000
        let zone = ZoneOffsets(name: "gap") { $0 < change ? 37_800 : 39_600 }
        let when = ScheduleWhen.cron(try CronExpression(parsing: "15 2 * * *"), zone: .local)
        #expect(when.nextSlot(after: Self.at("2026-10-03T00:00:00Z"), offsets: zone) == Self.at("2026-10-03T15:30:00Z"))
        #expect(zone.firstInstant(showing: zone.wallSeconds(at: change) - 60) == change)
        #expect(zone.firstInstant(showing: zone.wallSeconds(at: change)) == change)
        #expect(zone.firstInstant(showing: zone.wallSeconds(at: change) - 31 * 60) == change - 60)
    }

    // MARK: the host's zone

    /// On a UTC host this compares zeros; `TZ=Europe/Berlin swift test
    /// --filter ScheduleTimeTests` exercises real offsets.
    @Test("ZoneOffsets.local is the process's zone, as Foundation sees it")
    func localZoneMatchesFoundation() {
        let zone = TimeZone.current
        for text in ["2026-01-15T12:00:00Z", "2026-07-15T12:00:00Z", "2000-02-29T00:00:00Z", "1970-01-01T00:00:00Z"] {
            let seconds = Self.at(text) / 1000
            let expected = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds)))
            #expect(Int(ZoneOffsets.local.secondsEast(seconds)) == expected, "\(text) in \(zone.identifier)")
        }
        #expect(ZoneOffsets.utc.secondsEast(Self.at("2026-07-15T12:00:00Z") / 1000) == 0)
    }

    // MARK: jitter

    @Test("jitter: fixed per name and host, within [0, max), spread over names, 0 for no window")
    func jitter() {
        // Pinned: a change of hash would move every schedule's delay.
        #expect(scheduleJitter(name: "backup", hostKey: "host-a", maxMs: 3_600_000) == 410_403)
        #expect(scheduleJitter(name: "backup", hostKey: "host-b", maxMs: 3_600_000) == 1_734_459)
        #expect(scheduleJitter(name: "report", hostKey: "host-a", maxMs: 3_600_000) == 1_555_606)
        #expect(scheduleJitter(name: "backup", hostKey: "host-a", maxMs: 3_600_000)
            == scheduleJitter(name: "backup", hostKey: "host-a", maxMs: 3_600_000))
        // The separator keeps host and name apart.
        #expect(scheduleJitter(name: "c", hostKey: "ab", maxMs: 1 << 40) != scheduleJitter(name: "bc", hostKey: "a", maxMs: 1 << 40))

        let names = (0..<20).map { "job\($0)" }
        let delays = names.map { scheduleJitter(name: $0, hostKey: "host-a", maxMs: 3_600_000) }
        #expect(delays.allSatisfy { (0..<3_600_000).contains($0) })
        #expect(Set(delays).count >= 18, "\(delays)")
        // Spread: not all in one half of the window.
        #expect(delays.contains { $0 < 1_800_000 } && delays.contains { $0 >= 1_800_000 })

        for window: Int64 in [1, 2, 7, 1000, .max] {
            for name in names {
                #expect((0..<window).contains(scheduleJitter(name: name, hostKey: "h", maxMs: window)))
            }
        }
        #expect(scheduleJitter(name: "backup", hostKey: "host-a", maxMs: 0) == 0)
        #expect(scheduleJitter(name: "backup", hostKey: "host-a", maxMs: -5) == 0)
    }
}
