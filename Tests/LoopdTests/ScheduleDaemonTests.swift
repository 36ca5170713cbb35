import Foundation
import Glibc
import LoopdCore
import LoopdProtocol
import Testing

/// Schedules in a real daemon: slots on the wall clock's grid, R13's one
/// catch-up after loopd was stopped, the last slot kept across a restart,
/// and who may pause, resume and trigger (docs/OPERATIONS.md, "Schedules").
@Suite(.serialized) struct ScheduleDaemonTests {
    /// The schedule named `name` in a `schedules` reply.
    private static func schedule(_ c: TestClient, _ name: String = "tick") -> JSON? {
        c.call(#"{"id":"s","op":"schedules"}"#)?["schedules"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    private static func count(_ field: String, _ c: TestClient) -> Int64 { schedule(c)?[field]?.integerValue ?? -1 }

    /// A daemon process with `[schedules.tick]` running `noop` every `period`.
    private static func daemon(_ dir: String, every period: String, _ keys: String = "") -> DurableReplayTests.DaemonProcess {
        DurableReplayTests.DaemonProcess(directory: dir, extraConfig: """
            [schedules.tick]
            action = "noop"
            every = "\(period)"
            \(keys)

            """)
    }

    @Test("a 1s schedule runs on its slots: whole seconds of the epoch grid, each a job loopd ran")
    func aOneSecondScheduleRunsOnItsSlots() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = Self.daemon(dir, every: "1s")
        try d.start()
        defer { d.terminate() }
        let c = try TestClient(path: d.socketPath)
        var slots: Set<String> = []
        #expect(waitUntil {
            if let slot = Self.schedule(c)?["last_slot"]?.stringValue { slots.insert(slot) }
            return slots.count >= 3
        }, "three slots never ran: \(slots)")
        for slot in slots {
            let ms = try #require(Timestamp.parse(slot), "\(slot)")
            #expect(ms % 1000 == 0, "slot \(slot) is off the 1s grid")
        }
        let s = try #require(Self.schedule(c))
        let job = try #require(s["last_job"]?.stringValue, "an administrator is shown the last job: \(s)")
        #expect(waitUntil { c.call(#"{"id":1,"op":"status","job":"\#(job)"}"#)?["state"]?.stringValue == "completed" })
        #expect(s["when"]?.stringValue == "every 1s")
    }

    @Test("R13: loopd stopped (SIGSTOP) over several slots makes one run for all of them on SIGCONT (catch_up = one)")
    func aStoppedLoopdCatchesUpOnce() async throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = Self.daemon(dir, every: "2s")
        try d.start()
        defer { d.terminate() }
        let c = try TestClient(path: d.socketPath)
        #expect(waitUntil { Self.count("fired", c) >= 1 }, "the schedule never ran")
        let pid = try #require(d.pid)
        let fired = Self.count("fired", c), skipped = Self.count("skipped", c)
        let counted = ContinuousClock.now
        kill(pid, SIGSTOP)
        let stopped = ContinuousClock.now
        try await Task.sleep(for: .seconds(7))  // three or four slots pass while loopd cannot look
        kill(pid, SIGCONT)
        let resumed = ContinuousClock.now
        #expect(waitUntil { Self.count("fired", c) > fired }, "no run after SIGCONT")
        let missed = Self.count("skipped", c) - skipped
        let ran = Self.count("fired", c) - fired
        #expect(missed >= 2, "the slots of the stop were not folded into one run: \(missed) skipped")
        // One catch-up run; besides it, only slots that came while loopd
        // was not stopped, on time (one, unless this test was held up).
        let running = (stopped - counted) + (ContinuousClock.now - resumed)
        let onTime = Int((running / .seconds(2)).rounded(.up))
        #expect(ran <= 1 + max(onTime, 1), "one catch-up run, then the slots on time: \(ran) runs in \(running) not stopped")
    }

    @Test("the last slot survives a restart: after a downtime of several slots, the first look catches up once")
    func theLastSlotIsDurable() async throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = Self.daemon(dir, every: "2s")
        try d.start()
        let c = try TestClient(path: d.socketPath)
        #expect(waitUntil { Self.count("fired", c) >= 1 }, "the schedule never ran")
        let before = try #require(Self.schedule(c)?["last_slot"]?.stringValue)
        d.terminate()
        try await Task.sleep(for: .seconds(5))  // two slots or more pass with no loopd
        try d.start()
        defer { d.terminate() }
        let again = try TestClient(path: d.socketPath)
        let s = try #require(Self.schedule(again))
        // Started with the saved slot: the missed ones are due at once, as one run.
        #expect(waitUntil { Self.count("fired", again) >= 1 }, "no run after the restart: \(s)")
        #expect(Self.count("skipped", again) >= 1, "the restart did not see the slots it missed")
        #expect(Self.schedule(again)?["last_slot"]?.stringValue.flatMap(Timestamp.parse) ?? 0 > Timestamp.parse(before)!)
    }

    @Test("pause, resume and trigger: administrators only; others get forbidden and see no job ids")
    func administratorsControlSchedules() throws {
        guard LoopdAsAnotherUser.isAvailable else { return }
        let d = try LoopdAsAnotherUser(tables: LoopdAsAnotherUser.twoWorkers + """
            [schedules.tick]
            action = "noop"
            every = "1h"
            """, server: "admin_users = [\(Account.sys.uid)]")
        defer { d.stop() }
        let user = try d.client(as: .nobody), admin = try d.client(as: .sys)
        for op in ["pause", "resume", "trigger"] {
            let r = user.call(#"{"id":1,"op":"\#(op)","schedule":"tick"}"#)
            #expect(r?["error"]?["code"]?.stringValue == "forbidden", "\(op) as nobody: \(String(describing: r))")
        }
        let triggered = try #require(admin.call(#"{"id":2,"op":"trigger","schedule":"tick"}"#))
        let job = try #require(triggered["job"]?.stringValue, "\(triggered)")
        #expect(waitUntil { admin.call(#"{"id":3,"op":"status","job":"\#(job)"}"#)?["state"]?.stringValue == "completed" })
        #expect(Self.schedule(admin)?["last_job"]?.stringValue == job)
        let seen = try #require(Self.schedule(user), "a user may list the schedules")
        #expect(seen["last_job"] == nil && seen["next_run"]?.stringValue != nil, "\(seen)")

        #expect(admin.call(#"{"id":4,"op":"pause","schedule":"tick"}"#)?["paused"] == .bool(true))
        #expect(Self.schedule(admin)?["next_run"] == .null)
        #expect(admin.call(#"{"id":5,"op":"resume","schedule":"tick"}"#)?["paused"] == .bool(false))
        #expect(Self.schedule(admin)?["next_run"]?.stringValue != nil)
        let unknown = admin.call(#"{"id":6,"op":"trigger","schedule":"nope"}"#)
        #expect(unknown?["error"]?["code"]?.stringValue == "unknown_schedule", "\(String(describing: unknown))")
    }
}
