import LoopPlatform

/// A point on a loop's clock, in nanoseconds since an arbitrary origin
/// (boot, for the system clock).
public struct LoopInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: UInt64

    /// The instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// Later than every instant a loop will reach.
    public static let distantFuture = LoopInstant(nanoseconds: UInt64.max)

    /// Whether `a` comes before `b`.
    public static func < (a: LoopInstant, b: LoopInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// `self + d`, saturating at `distantFuture`; negative durations count as zero.
    public func advanced(by d: Duration) -> LoopInstant {
        let n = d.nanosecondsClamped
        let (sum, overflow) = nanoseconds.addingReportingOverflow(n)
        return overflow ? .distantFuture : LoopInstant(nanoseconds: sum)
    }

    /// `self - other` as a duration, zero if `other` is later.
    public func duration(since other: LoopInstant) -> Duration {
        nanoseconds > other.nanoseconds ? .nanoseconds(Int64(clamping: nanoseconds - other.nanoseconds)) : .zero
    }

    /// Seconds since the origin with three decimals (`"12.345"`), or
    /// `"never"` for `distantFuture`.
    public var description: String {
        self == .distantFuture ? "never" : String(format3(Double(nanoseconds) / 1e9))
    }
}

private func format3(_ x: Double) -> String {
    let scaled = (x * 1000).rounded()
    let whole = Int64(scaled) / 1000, frac = Int64(scaled) % 1000
    let f = String(frac)
    return "\(whole)." + String(repeating: "0", count: 3 - f.count) + f
}

extension Duration {
    /// Whole nanoseconds, clamped to `0...UInt64.max`.
    var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds < 0) { return 0 }
        let (s, o1) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if o1 { return .max }
        let (t, o2) = s.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return o2 ? .max : t
    }
}

/// The monotonic instant `duration` from now, saturating; the deadline form
/// every timed wait in the port code uses.
func monotonicDeadline(after duration: Duration) -> UInt64 {
    let (sum, overflow) = monotonicNanoseconds().addingReportingOverflow(duration.nanosecondsClamped)
    return overflow ? .max : sum
}
