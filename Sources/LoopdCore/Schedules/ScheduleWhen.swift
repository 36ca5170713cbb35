/// When a schedule's slots are: at a fixed period, or where a cron
/// expression matches a zone's wall clock.
enum ScheduleWhen: Sendable, Equatable, CustomStringConvertible {
    /// Slots at whole multiples of the period since the Unix epoch, so they
    /// do not drift with restarts and no zone or clock change moves them:
    /// every 5m fires at :00, :05, :10 UTC whatever the host's zone. The
    /// period is positive (`parseScheduleDuration` gives no other).
    case every(milliseconds: Int64)
    /// Slots where the expression matches the wall clock of `zone`.
    case cron(CronExpression, zone: ZoneKind)

    /// Which clock a cron expression reads.
    enum ZoneKind: String, Sendable {
        /// Coordinated Universal Time, which has no daylight-saving changes.
        case utc = "UTC"
        /// The host's zone, given to `nextSlot` as its `offsets`.
        case local
    }

    /// How many days ahead `nextSlot` looks for a cron slot: eight years,
    /// which holds two leap days even across a century that has none, so
    /// `0 0 29 2 *` is always found and `0 0 30 2 *` costs a bounded walk.
    static let cronSearchDays: Int64 = 8 * 366

    /// The first slot strictly after `unixMs` (milliseconds since the
    /// epoch), or nil if there is none: a cron expression with no match
    /// within `cronSearchDays` (`0 0 30 2 *`), or a slot beyond `Int64`.
    ///
    /// `offsets` is the host's zone (`ZoneOffsets.local` in the daemon); a
    /// `.utc` cron and `every` ignore it.
    ///
    /// Cron and daylight-saving time:
    /// - Cron fields match wall-clock time in the zone. Each wall-clock
    ///   minute that matches gives at most one slot.
    /// - A matching wall time that does not exist, because clocks spring
    ///   forward over it, fires once, at the first instant after the gap:
    ///   when clocks go from 02:00 to 03:00, `30 2 * * *` fires at 03:00.
    ///   Several matching wall times in the same gap (02:00, 02:15, 02:30,
    ///   02:45) give that one slot, not four; so does a match at 03:00 itself.
    /// - A matching wall time that occurs twice, because clocks fall back
    ///   over it, fires once, at its first occurrence: when clocks go from
    ///   03:00 back to 02:00, `30 2 * * *` fires at the first 02:30 only, and
    ///   `0 * * * *` fires at the first 02:00 and next at 03:00.
    func nextSlot(after unixMs: Int64, offsets: ZoneOffsets) -> Int64? {
        switch self {
        case .every(let period):
            precondition(period > 0, "an every schedule's period is positive, got \(period)")
            let (index, o1) = floorDivide(unixMs, period).addingReportingOverflow(1)
            let (slot, o2) = index.multipliedReportingOverflow(by: period)
            return o1 || o2 ? nil : slot
        case .cron(let expression, let zone):
            return Self.nextCronSlot(expression, after: unixMs, offsets: zone == .utc ? .utc : offsets)
        }
    }

    /// Walks the matching wall minutes in order and returns the first whose
    /// instant is after `unixMs`. Instants never go down as wall minutes go
    /// up (a gap's minutes share the instant after it, an overlap's take
    /// their first occurrence), so the walk starts at the minute now shown
    /// and the first hit is the answer; a minute met again after its first
    /// occurrence, or one more in a gap already fired, maps to an instant not
    /// after `unixMs` and is passed over.
    private static func nextCronSlot(_ expression: CronExpression, after unixMs: Int64,
                                     offsets: ZoneOffsets) -> Int64? {
        let now = floorDivide(unixMs, 1000)
        var wall = floorDivide(offsets.wallSeconds(at: now), 60) * 60
        let endDay = floorDivide(wall, 86_400) + cronSearchDays
        while let match = expression.firstMatch(atOrAfterWall: wall, beforeDay: endDay) {
            if let instant = offsets.firstInstant(showing: match) {
                let (slot, overflow) = instant.multipliedReportingOverflow(by: 1000)
                if overflow { return nil }
                if slot > unixMs { return slot }
            }
            wall = match + 60
        }
        return nil
    }

    /// `every 5m`, `every 1h30m`, `cron 0 9 * * 1-5 (local)`, `cron @daily (UTC)`.
    var description: String {
        switch self {
        case .every(let period): "every \(formatScheduleDuration(period))"
        case .cron(let expression, let zone): "cron \(expression.text) (\(zone.rawValue))"
        }
    }
}
