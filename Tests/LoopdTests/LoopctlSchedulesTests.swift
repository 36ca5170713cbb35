import Testing
import LoopdProtocol
@testable import LoopctlCommands

// loopctl schedules: the table, and an administrator's pause, resume and
// trigger (what a refusal says, what a trigger prints).

@Suite("loopctl schedules")
struct LoopctlSchedulesTests {
    @Test("the table: a schedule's grid, next run, last slot, last job and its state, runs and skips; paused instead of a next run")
    func table() throws {
        let out = try human(try parse(["schedules"]) as SchedulesListCommand, #"{"id":1,"ok":true,"schedules":[{"name":"nightly","action":"backup","when":"cron 30 2 * * * (local)","catch_up":"one","overlap":"skip","jitter_ms":600000,"delay_ms":254873,"paused":false,"next_run":"2026-11-27T02:34:14.873Z","last_slot":"2026-11-26T02:30:00.000Z","last_job":"0mdih8thhn0f9","last_state":"completed","last_error":null,"fired":1,"skipped":0},{"name":"tick","action":"noop","when":"every 5m","catch_up":"one","overlap":"skip","jitter_ms":0,"delay_ms":0,"paused":true,"next_run":null,"last_slot":null,"last_error":"queue_full: worker w1 has 5 jobs queued, the limit","fired":0,"skipped":3}]}"#)
        #expect(out == CommandOutput(standardOutput: """
            NAME     WHEN                     NEXT RUN                  LAST SLOT                 LAST JOB       STATE      RUNS  SKIPPED
            nightly  cron 30 2 * * * (local)  2026-11-27T02:34:14.873Z  2026-11-26T02:30:00.000Z  0mdih8thhn0f9  completed     1        0
            tick     every 5m                 paused                    -                         -              refused       0        3

            """))
    }

    @Test("trigger prints the job's id; pause and resume say what they did")
    func controls() throws {
        let triggered = try human(try parse(["schedules", "trigger", "nightly"]) as ScheduleCommandTrigger,
                                  #"{"id":1,"ok":true,"schedule":"nightly","job":"1b0qv9mk2c3xa","paused":false}"#)
        #expect(triggered == CommandOutput(standardOutput: "1b0qv9mk2c3xa\n"))
        let paused = try human(try parse(["schedules", "pause", "nightly"]) as ScheduleCommandPause,
                               #"{"id":1,"ok":true,"schedule":"nightly","paused":true}"#)
        #expect(paused == CommandOutput(standardOutput: "nightly: paused\n"))
    }

    @Test("forbidden: who may, exit 7; unknown_schedule: the daemon's refusal, exit 5")
    func refusals() throws {
        let forbidden = try human(try parse(["schedules", "pause", "nightly"]) as ScheduleCommandPause,
                                  #"{"id":1,"ok":false,"error":{"code":"forbidden","message":"uid 1000 may not pause schedules"}}"#)
        #expect(forbidden.status == .notAdministrator)
        #expect(forbidden.diagnostic?.contains("only an administrator of loopd may pause a schedule") == true)
        let unknown = try human(try parse(["schedules", "trigger", "nope"]) as ScheduleCommandTrigger,
                                #"{"id":1,"ok":false,"error":{"code":"unknown_schedule","message":"no schedule named \"nope\""}}"#)
        #expect(unknown.status == .refused)
        #expect(unknown.diagnostic?.contains("unknown_schedule") == true)
    }
}

// loopctl retry and discard: one job or filters, what each prints.

@Suite("loopctl retry and discard")
struct LoopctlRerunTests {
    @Test("retry JOB prints the new job; in bulk a line per job, the refusals on stderr with exit 5")
    func retryOutput() throws {
        let one = try human(try parse(["retry", "j1"]) as RetryCommand,
                            #"{"id":1,"ok":true,"job":"j9","retry_of":"j1","state":"queued"}"#)
        #expect(one == CommandOutput(standardOutput: "j9\n"))
        let bulk = try human(try parse(["retry", "--since", "1h"]) as RetryCommand,
                             #"{"id":1,"ok":true,"retried":[{"job":"j1","as":"j9"}],"refused":[{"job":"j2","error":{"code":"quota_exceeded","message":"uid 7 has 10 jobs"}}],"more":true}"#)
        #expect(bulk.standardOutput == "j1 -> j9\nmore jobs match: run it again\n")
        #expect(bulk.status == .refused && bulk.diagnostic == "loopctl: j2: quota_exceeded: uid 7 has 10 jobs")
    }

    @Test("a job and filters together, or neither, or a state that is not an end, are usage errors")
    func usageErrors() {
        for arguments in [["retry"], ["retry", "j1", "--state", "failed"], ["discard", "--state", "running"],
                          ["discard", "--limit", "0", "--state", "failed"]] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try Loopctl.parseAsRoot(arguments) }
        }
    }

    @Test("discard prints each job it forgot")
    func discardOutput() throws {
        let bulk = try human(try parse(["discard", "--state", "failed"]) as DiscardCommand,
                             #"{"id":1,"ok":true,"discarded":["j1","j2"],"more":false}"#)
        #expect(bulk == CommandOutput(standardOutput: "j1\nj2\n"))
    }
}
