import Foundation
import Testing
import LoopdCore
import LoopdProtocol
@testable import LoopctlCommands

// loopctl status's times, durations and job usage, against canned replies
// and the daemon.

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

    @Test("job usage: CPU time user and system, peak memory in binary units, and what counted them")
    func statusWithUsage() throws {
        let status: StatusCommand = try parse(["status", "j1"])
        let out = try human(status, #"{"id":1,"ok":true,"job":"j1","state":"completed","worker":"w1","action":"spin","durable":false,"run_ms":1300,"result":{"exit_code":0,"signal":null,"stdout":"","stderr":"","stdout_truncated":false,"stderr_truncated":false},"usage":{"cpu_user_usec":1234567,"cpu_system_usec":850,"memory_peak_bytes":3670016,"source":"cgroup"}}"#)
        #expect(out.standardOutput.hasSuffix("""
            run time     1.3s
            result       {"exit_code":0,"signal":null,"stdout":"","stderr":"","stdout_truncated":false,"stderr_truncated":false}
            cpu time     1.2s user, 850us system
            peak memory  3.5 MiB
            counted by   cgroup

            """), "\(out.standardOutput)")
        #expect(!out.standardOutput.contains("usage"))

        let unknownPeak = try human(status, #"{"id":1,"ok":true,"job":"j1","state":"failed","usage":{"cpu_user_usec":0,"cpu_system_usec":12000,"memory_peak_bytes":null,"source":"rusage"}}"#)
        #expect(unknownPeak.standardOutput == """
            job          j1
            state        failed
            cpu time     0us user, 12ms system
            peak memory  -
            counted by   rusage

            """)
    }

    @Test("CPU times: microseconds below a millisecond, then as durations; sizes: bytes, then KiB to TiB with a tenth, rounded down")
    func usageUnits() {
        for (us, text) in [(Int64(0), "0us"), (999, "999us"), (1000, "1ms"), (340_999, "340ms"), (1_234_567, "1.2s"),
                           (245_000_000, "4m05s")] {
            #expect(TextLayout.duration(microseconds: us) == text, "\(us)")
        }
        for (n, text) in [(Int64(0), "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
                          (1_048_575, "1023.9 KiB"), (1_048_576, "1.0 MiB"), (12_897_484, "12.2 MiB"),
                          (12_897_485, "12.3 MiB"), (Int64(2) << 30, "2.0 GiB"), (Int64(5) << 40, "5.0 TiB"),
                          (Int64(3) << 50, "3072.0 TiB")] {
            #expect(TextLayout.bytes(n) == text, "\(n)")
        }
    }

    @Test("against the daemon: status of an exec job shows what it used")
    func statusOfAnExecJobShowsItsUsage() throws {
        let d = RunningDaemon { config in
            let spin = DaemonConfig.Exec(argv: ["/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            config.actions["spin"] = DaemonConfig.Action(exec: spin)
        }
        defer { d.stop() }
        let submitted = Captured()
        #expect(Loopctl.execute(["submit", "--json", "--socket", d.socketPath, "spin"], in: submitted.context()) == .ok)
        let job = try #require(try JSONParser.parse(Array(submitted.out.utf8.prefix { $0 != 0x0A }))["job"]?.stringValue)

        let shown = Captured()
        #expect(Loopctl.execute(["status", "--socket", d.socketPath, job], in: shown.context()) == .ok)
        let rows = Dictionary(shown.out.split(separator: "\n").map { line -> (String, String) in
            let cells = line.split(separator: "  ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return (cells[0], cells.count > 1 ? cells[1] : "")
        }, uniquingKeysWith: { first, _ in first })
        #expect(rows["cpu time"]?.contains(" user, ") == true && rows["cpu time"]?.hasSuffix(" system") == true, "\(shown.out)")
        #expect(rows["peak memory"] != nil && rows["counted by"].map { ["cgroup", "rusage"].contains($0) } == true,
                "\(shown.out)")
    }

    @Test("an unknown job is a refusal: exit 5")
    func statusUnknown() throws {
        let out = try human(try parse(["status", "j9"]) as StatusCommand, #"{"id":1,"ok":false,"error":{"code":"unknown_job","message":"no job j9"}}"#)
        #expect(out == CommandOutput(diagnostic: "loopctl: unknown_job: no job j9", status: .refused))
    }
}
