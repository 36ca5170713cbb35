import Foundation

/// How the pages write instants and durations. An instant is a `<time>`
/// element in UTC; the page's script rewrites its text in the viewer's
/// zone and keeps UTC in its title, shown on hover.
enum TimeText {
    /// `2026-11-26T21:05:41Z`.
    static func iso(_ date: Date) -> String {
        let s = Int64(date.timeIntervalSince1970.rounded(.down))
        var t = time_t(s)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// The instant as a `<time>` element, or a dash.
    static func element(_ date: Date?) -> HTML {
        guard let date else { return "–" }
        let iso = iso(date)
        let utc = iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
        return "<time datetime=\"\(iso)\" title=\"\(utc)\">\(utc)</time>"
    }

    /// `850 ms`, `12.4 s`, `3 min 20 s`, `2 h 05 min`.
    static func duration(ms: Int64) -> String {
        if ms < 1000 { return "\(max(0, ms)) ms" }
        if ms < 60_000 { return String(format: "%.1f s", Double(ms) / 1000) }
        let s = ms / 1000
        if s < 3600 { return "\(s / 60) min \(s % 60) s" }
        return String(format: "%lld h %02lld min", s / 3600, (s % 3600) / 60)
    }

    /// A duration in seconds for a chart's axis: `3 ms`, `1.2 s`.
    static func seconds(_ s: Double) -> String {
        if s == 0 { return "0" }
        if s < 0.001 { return String(format: "%.0f µs", s * 1_000_000) }
        if s < 1 { return String(format: "%.0f ms", s * 1000) }
        return String(format: "%.1f s", s)
    }
}
