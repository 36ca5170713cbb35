/// Why a schedule's text (a duration, a cron expression) was refused. The
/// message names the part at fault and what would be accepted, so the
/// configuration loader can show it after the key path as it is.
struct ScheduleSpecError: Error, Equatable, CustomStringConvertible {
    /// One line for the operator, e.g. `minute: 61 is out of range 0-59`.
    let message: String

    var description: String { message }
}
