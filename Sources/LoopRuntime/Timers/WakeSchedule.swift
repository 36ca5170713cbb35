/// When may a loop sleep until? A pure function of the timers' windows and
/// the run's deadline, asserted directly by tests.
///
/// Each timer may fire anywhere in `[fireDate, fireDate + tolerance]` (R14).
/// The loop wakes at the latest fire date that still lies inside every
/// earlier timer's window, so one wake-up serves as many timers as possible,
/// none fires early, and a lone timer fires on time.
///
/// - Parameters:
///   - windows: `(fireDate, tolerance)` of candidate timers, any order.
///   - runDeadline: the run's timeout instant, which allows no slack.
/// - Returns: the instant to wake, or nil to sleep until something else happens.
func wakeInstant(windows: [(LoopInstant, Duration)], runDeadline: LoopInstant?) -> LoopInstant? {
    let sorted = windows.sorted { $0.0 < $1.0 }
    var wake: LoopInstant? = nil
    var latestAllowed = LoopInstant.distantFuture
    for (fire, tolerance) in sorted {
        guard fire <= latestAllowed else { break }
        wake = fire
        latestAllowed = min(latestAllowed, fire.advanced(by: tolerance))
    }
    switch (wake, runDeadline) {
    case let (w?, d?): return min(w, d)
    case let (w?, nil): return w
    case let (nil, d): return d
    }
}

extension TimerHeap {
    /// When a loop must wake for this heap's timers and the run's deadline:
    /// `wakeInstant` over the windows that can share the first timer's
    /// wake-up (R14). `isLive` says which entries still stand (the others
    /// are dropped from the top, as `liveTop` does).
    mutating func wake(isLive: (Entry) -> Bool, runDeadline: LoopInstant?) -> LoopInstant? {
        guard let first = liveTop(isLive: isLive) else { return runDeadline }
        let firstWindow = first.timer.window()
        if let (fireDate, tolerance) = firstWindow, tolerance == .zero {
            // The earliest timer allows no slack, so no other timer can move
            // the wake-up: what `wakeInstant` would find, without collecting
            // and sorting the windows.
            return runDeadline.map { min($0, fireDate) } ?? fireDate
        }
        // Only timers due before the first one's window closes can share its wake-up.
        let limit = first.deadline.advanced(by: firstWindow?.1 ?? .zero)
        var windows: [(LoopInstant, Duration)] = []
        for e in entries(notAfter: limit) where isLive(e) {
            if let w = e.timer.window() { windows.append(w) }
        }
        return wakeInstant(windows: windows, runDeadline: runDeadline)
    }
}
