import Glibc

/// A time zone as the schedules see it: its UTC offset at any instant.
/// Everything else (wall clock to instant, gaps, overlaps) is worked out
/// from this one function, so tests can stand in any zone they can
/// describe.
struct ZoneOffsets: Sendable {
    /// For messages and descriptions: `UTC`, `local`.
    let name: String
    /// The offset in force at an instant: seconds east of UTC (Berlin in
    /// winter: 3600).
    let secondsEast: @Sendable (_ unixSeconds: Int64) -> Int32

    /// Coordinated Universal Time: always 0.
    static let utc = ZoneOffsets(name: "UTC") { _ in 0 }

    /// The host's zone: `TZ` if set, else `/etc/localtime`, as glibc's
    /// `localtime_r` reads it. glibc loads the zone once per process, so a
    /// change of `TZ` or of the file takes effect when loopd restarts. An
    /// instant `localtime_r` cannot convert counts as offset 0.
    static let local = ZoneOffsets(name: "local") { unixSeconds in
        guard var t = time_t(exactly: unixSeconds) else { return 0 }
        var parts = tm()
        guard localtime_r(&t, &parts) != nil else { return 0 }
        return Int32(exactly: parts.tm_gmtoff) ?? 0
    }

    /// The wall-clock reading at an instant, as seconds counted like Unix
    /// time but on the zone's clock ("wall seconds").
    func wallSeconds(at unixSeconds: Int64) -> Int64 {
        unixSeconds + Int64(secondsEast(unixSeconds))
    }

    /// The instant at which the zone's clock first shows `wall` (wall
    /// seconds), by the rules documented at `ScheduleWhen.nextSlot`:
    /// a reading the clock shows twice gives its first occurrence; a reading
    /// skipped by a gap gives the first instant after the gap.
    ///
    /// Any instant showing `wall` lies within a day of it (offsets stay
    /// under 24 h), at `wall` minus an offset in force then. The candidates
    /// are the offsets a day before and a day after, and the offsets at the
    /// instants those two point to; they cover every zone whose offset
    /// changes at most once in a day. Nil when no instant shows `wall` and
    /// no single jump passes over it (an offsets function with changes
    /// closer together than that): the caller then passes the minute over.
    func firstInstant(showing wall: Int64) -> Int64? {
        let day: Int64 = 86_400
        let before = Int64(secondsEast(wall - day))
        let after = Int64(secondsEast(wall + day))
        var offsets = [before, after]
        for o in [before, after] { offsets.append(Int64(secondsEast(wall - o))) }

        let showing = offsets.map { wall - $0 }.filter { wallSeconds(at: $0) == wall }
        if let first = showing.min() { return first }

        // A gap: the clock jumps from before `wall` to after it. Find the
        // instant of the jump, where the reading first passes `wall`.
        guard var low = offsets.map({ wall - $0 }).min(), var high = offsets.map({ wall - $0 }).max(),
              wallSeconds(at: low) < wall, wallSeconds(at: high) > wall
        else { return nil }
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if wallSeconds(at: middle) > wall { high = middle } else { low = middle }
        }
        return high
    }
}
