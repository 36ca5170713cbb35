import Foundation
import LoopdClient

/// `/schedules`: each schedule's grid, next and last run, and pause,
/// resume and trigger for an operator.
enum SchedulesPage {
    static func live(_ schedules: [ScheduleInfo], context: PageContext) -> HTML {
        Layout.table(
            caption: "Schedules", head: ["Schedule", "Action", "When", "Next run", "Last slot", "Last job", "Runs", "Skipped", ""],
            rows: schedules.map { s in
                let path = "/schedules/\(percentEncoded(s.name))"
                let pause = s.paused
                    ? Layout.button("Resume", action: path + "/resume", context: context)
                    : Layout.button("Pause", action: path + "/pause", context: context)
                let trigger = Layout.button("Run now", action: path + "/trigger", context: context)
                let last: HTML = s.lastJob.map { id in
                    "\(Layout.jobLink(id)) \(s.lastState.map(Layout.state) ?? "")"
                } ?? "\(s.lastState.map(Layout.state) ?? "–")"
                let next: HTML = s.paused ? "<span class=\"state held\">paused</span>" : TimeText.element(s.nextRun)
                return "<tr><th scope=\"row\">\(s.name)</th><td>\(s.action)</td><td><code>\(s.when)</code></td><td>\(next)</td><td>\(TimeText.element(s.lastSlot))</td><td>\(last)</td><td>\(s.runs)</td><td>\(s.skipped)</td><td>\(pause) \(trigger)</td></tr>"
            }, empty: "No schedules are configured.")
    }
}
