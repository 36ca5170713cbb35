import CSystemd

/// Talks to the service manager through sd_notify. Without NOTIFY_SOCKET
/// (not started by systemd) every call is a no-op, as sd_notify itself is.
struct Notifier: Sendable {
    /// Whether a service manager listens.
    let isActive: Bool

    init(environment: [String: String]) {
        isActive = environment["NOTIFY_SOCKET"] != nil
    }

    /// Sends `KEY=value` lines. Returns whether the manager received them.
    @discardableResult
    func send(_ state: String) -> Bool {
        guard isActive else { return false }
        return sd_notify(0, state) > 0
    }

    func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    func status(_ text: String) { send("STATUS=\(text)") }
    func stopping() { send("STOPPING=1") }
    func reloading() { send("RELOADING=1") }
    func watchdog() { send("WATCHDOG=1") }
    /// Asks for `microseconds` more before the stop or start timeout fires.
    func extendTimeout(microseconds: UInt64) { send("EXTEND_TIMEOUT_USEC=\(microseconds)") }
}

/// The watchdog interval systemd expects pings within (WATCHDOG_USEC, for
/// this process), nil when the watchdog is off.
func watchdogInterval() -> Duration? {
    var usec: UInt64 = 0
    guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
    return .microseconds(Int64(usec))
}
