import Testing
import LoopdProtocol
@testable import LoopctlCommands

// loopctl status's times and durations, against canned replies.

@Suite("loopctl status times")
struct LoopctlStatusTimesTests {
    @Test("status shows when the job was submitted, started and finished, how long it queued and ran, who cancelled it")
    func statusWithTimes() throws {
        let status: StatusCommand = try parse(["status", "j1"])
        let out = try human(status, #"{"id":1,"ok":true,"job":"j1","state":"cancelled","worker":"w1","action":"sleep","durable":false,"submitted_at":"2026-11-24T07:01:02.345Z","started_at":"2026-11-24T07:01:02.348Z","finished_at":"2026-11-24T07:01:04.048Z","queue_ms":3,"run_ms":1700,"result":{},"error":{"code":"cancelled","message":"cancelled while running"},"cancelled_by":1000}"#)
        #expect(out.standardOutput == """
            job           j1
            state         cancelled
            worker        w1
            action        sleep
            durable       no
            submitted     2026-11-24T07:01:02.345Z
            started       2026-11-24T07:01:02.348Z
            finished      2026-11-24T07:01:04.048Z
            queue time    3ms
            run time      1.7s
            result        {}
            error         cancelled: cancelled while running
            cancelled by  uid 1000

            """)
        #expect(out.status == .ok)
    }

    @Test("a job not started yet: only its submission time")
    func statusQueued() throws {
        let status: StatusCommand = try parse(["status", "j2"])
        let out = try human(status, #"{"id":1,"ok":true,"job":"j2","state":"held","worker":"w2","action":"noop","durable":true,"submitted_at":"2026-11-24T07:01:02.345Z"}"#)
        #expect(out.standardOutput == """
            job        j2
            state      held
            worker     w2
            action     noop
            durable    yes
            submitted  2026-11-24T07:01:02.345Z

            """)
    }

    @Test("durations: ms, seconds with a tenth, minutes and seconds, hours and minutes")
    func durations() {
        for (ms, text) in [
            (Int64(0), "0ms"), (999, "999ms"), (1000, "1.0s"), (1534, "1.5s"), (59_999, "59.9s"), (60_000, "1m00s"),
            (245_000, "4m05s"), (3_599_999, "59m59s"), (3_600_000, "1h00m"), (7_380_000, "2h03m"), (400_000_000, "111h06m"),
        ] {
            #expect(TextLayout.duration(milliseconds: ms) == text, "\(ms)")
        }
    }

    @Test("an unknown job is a refusal: exit 5")
    func statusUnknown() throws {
        let out = try human(try parse(["status", "j9"]) as StatusCommand, #"{"id":1,"ok":false,"error":{"code":"unknown_job","message":"no job j9"}}"#)
        #expect(out == CommandOutput(diagnostic: "loopctl: unknown_job: no job j9", status: .refused))
    }
}
