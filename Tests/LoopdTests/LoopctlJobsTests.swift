import Foundation
import Testing
import LoopdProtocol
@testable import LoopctlCommands

// loopctl jobs against canned replies and the fake daemon
// (LoopctlSupport.swift).

/// 2026-11-24T07:01:02.345Z, the "now" of these tests.
private let now: Int64 = 1_795_503_662_345

@Suite("loopctl jobs")
struct LoopctlJobsTests {
    static let page = #"{"id":1,"ok":true,"jobs":[{"job":"j1","state":"completed","worker":"w1","action":"echo","durable":false,"submitted_at":"2026-11-24T07:01:02.345Z","started_at":"2026-11-24T07:01:02.348Z","finished_at":"2026-11-24T07:01:02.350Z","queue_ms":3,"run_ms":2},{"job":"j22","state":"running","worker":"worker-2","action":"sleep","durable":true,"submitted_at":"2026-11-24T07:01:03.000Z","started_at":"2026-11-24T07:01:04.500Z","queue_ms":1500},{"job":"j3","state":"held","worker":"w1","action":"noop","durable":false,"submitted_at":"2026-11-24T07:01:05.000Z"},{"job":"j4","state":"queued","durable":true}],"next_cursor":null}"#

    static let table = """
        JOB  STATE      WORKER    ACTION  SUBMITTED                 QUEUE  RUN
        j1   completed  w1        echo    2026-11-24T07:01:02.345Z    3ms  2ms
        j22  running    worker-2  sleep   2026-11-24T07:01:03.000Z   1.5s    -
        j3   held       w1        noop    2026-11-24T07:01:05.000Z      -    -
        j4   queued     -         -       -                             -    -

        """

    @Test("a table: JOB, STATE, WORKER, ACTION, SUBMITTED, QUEUE, RUN; - for what is not known yet")
    func table() throws {
        let out = try human(try parse(["jobs"]) as JobsCommand, Self.page)
        #expect(out == CommandOutput(standardOutput: Self.table))
    }

    @Test("an empty list is the header alone")
    func emptyTable() throws {
        let out = try human(try parse(["jobs"]) as JobsCommand, #"{"id":1,"ok":true,"jobs":[],"next_cursor":null}"#)
        #expect(out.standardOutput == "JOB  STATE  WORKER  ACTION  SUBMITTED  QUEUE  RUN\n")
    }

    @Test("with a next cursor, the last line is the command for the next page, filters included")
    func nextPageLine() throws {
        let jobs: JobsCommand = try parse([
            "jobs", "--socket", "/run/my loopd.sock", "--state", "failed", "--state", "timed_out", "--worker", "w1",
            "--action", "date", "--since", "2026-11-24T08:00:00+01:00", "--limit", "2",
        ])
        let out = try human(jobs, #"{"id":1,"ok":true,"jobs":[{"job":"j1","state":"failed","worker":"w1","action":"date","submitted_at":"2026-11-24T07:01:02.345Z","queue_ms":0,"run_ms":12}],"next_cursor":"c'2 x"}"#)
        #expect(out.standardOutput == """
            JOB  STATE   WORKER  ACTION  SUBMITTED                 QUEUE   RUN
            j1   failed  w1      date    2026-11-24T07:01:02.345Z    0ms  12ms
            next page: loopctl jobs --socket '/run/my loopd.sock' --state failed --state timed_out --worker w1 --action date --since 2026-11-24T07:00:00.000Z --limit 2 --cursor 'c'\\''2 x'

            """)
        #expect(out.status == .ok)
    }

    @Test("--since 10m: ten minutes before now, sent as an absolute time, and kept so in the next-page line")
    func relativeSince() throws {
        let seen = SeenLines()
        let server = try FakeServer { request, _ in
            seen.append(request)
            return .lines([FakeServer.reply(to: request, #""ok":true,"jobs":[],"next_cursor":"more""#)])
        }
        defer { server.stop() }
        let captured = Captured()
        let status = Loopctl.execute(["jobs", "--socket", server.path, "--since", "10m"], in: captured.context(now: now))
        #expect(status == .ok)
        #expect(seen.all == [#"{"id":1,"op":"jobs","since":"2026-11-24T06:51:02.345Z"}"#])
        #expect(captured.out.hasSuffix("next page: loopctl jobs --socket \(server.path) --since 2026-11-24T06:51:02.345Z --cursor more\n"))
    }

    @Test("--since spans: s, m, h, d; an RFC 3339 time as it is; anything else is a usage error")
    func sinceArguments() throws {
        #expect(SinceArgument(argument: "90s") == .ago(milliseconds: 90_000))
        #expect(SinceArgument(argument: "10m") == .ago(milliseconds: 600_000))
        #expect(SinceArgument(argument: "2h") == .ago(milliseconds: 7_200_000))
        #expect(SinceArgument(argument: "1d") == .ago(milliseconds: 86_400_000))
        #expect(SinceArgument(argument: "0m") == .ago(milliseconds: 0))
        #expect(SinceArgument(argument: "999999999d") == .ago(milliseconds: 999_999_999 * 86_400_000))
        #expect(SinceArgument(argument: "2026-11-24T07:01:02.345Z") == .instant(unixMs: now))
        #expect(SinceArgument(argument: "2026-11-24T08:01:02.345+01:00")?.resolve(nowUnixMs: 0) == now)
        #expect(SinceArgument(argument: "2h")?.resolve(nowUnixMs: now) == now - 7_200_000)
        for bad in ["", "m", "10", "10M", "10w", "-5m", "+5m", "1.5h", "10 m", "1000000000d", "١٠m", "yesterday", "2026-11-24"] {
            #expect(SinceArgument(argument: bad) == nil, "\(bad)")
            let captured = Captured()
            #expect(Loopctl.execute(["jobs", "--since", bad], in: captured.context()) == .usage, "\(bad)")
        }
    }

    @Test("the request: states once each in the order given, only the options given")
    func requests() throws {
        #expect(requestLine(try parse(["jobs"]) as JobsCommand) == #"{"id":1,"op":"jobs"}"#)
        let jobs: JobsCommand = try parse(["jobs", "--state", "queued", "--state", "held", "--state", "queued", "--limit", "1000", "--cursor", "abc"])
        #expect(requestLine(jobs) == #"{"id":1,"op":"jobs","state":["queued","held"],"limit":1000,"cursor":"abc"}"#)
        let since = jobs.requestFields(sinceUnixMs: -1, cursor: "next")
        #expect(JSON.object(since).serialized()
            == #"{"op":"jobs","state":["queued","held"],"since":"1969-12-31T23:59:59.999Z","limit":1000,"cursor":"next"}"#)
    }

    @Test("usage errors: unknown state, limit out of range, empty or long cursor")
    func usageErrors() {
        for arguments in [
            ["jobs", "--state", "sleeping"], ["jobs", "--state", "timedOut"], ["jobs", "--limit", "0"],
            ["jobs", "--limit", "1001"], ["jobs", "--limit", "ten"], ["jobs", "--cursor", ""],
            ["jobs", "--cursor", String(repeating: "c", count: 257)], ["jobs", "extra"],
        ] {
            let captured = Captured()
            #expect(Loopctl.execute(arguments, in: captured.context()) == .usage, "\(arguments)")
            #expect(captured.err.hasPrefix("Error:"), "\(arguments): \(captured.err)")
        }
    }

    @Test("a refusal exits 5; an ok reply without the jobs array, or a bad cursor, is a protocol error")
    func refusalsAndBadReplies() throws {
        let jobs: JobsCommand = try parse(["jobs"])
        let refused = try human(jobs, #"{"id":1,"ok":false,"error":{"code":"bad_request","message":"\"cursor\" is not one of mine"}}"#)
        #expect(refused == CommandOutput(diagnostic: #"loopctl: bad_request: "cursor" is not one of mine"#, status: .refused))
        #expect(throws: ClientError.self) { try human(jobs, #"{"id":1,"ok":true,"next_cursor":null}"#) }
        #expect(throws: ClientError.self) { try human(jobs, #"{"id":1,"ok":true,"jobs":{},"next_cursor":null}"#) }
        #expect(throws: ClientError.self) { try human(jobs, #"{"id":1,"ok":true,"jobs":[],"next_cursor":7}"#) }
    }

    /// A fake daemon with 3 pages: `c1` and `c2` lead to the second and
    /// third; the first page answers a request without a cursor.
    static func threePages(_ seen: SeenLines, refuseThird: Bool = false) throws -> FakeServer {
        try FakeServer { request, _ in
            seen.append(request)
            let cursor = (try? JSONParser.parse(request.utf8))?["cursor"]?.stringValue
            let fields: String
            switch cursor {
            case nil:
                fields = #""ok":true,"jobs":[{"job":"a1","state":"completed","worker":"w1","action":"echo","submitted_at":"2026-11-24T07:00:00.000Z","queue_ms":1,"run_ms":1},{"job":"a2","state":"failed","worker":"w2","action":"fail","submitted_at":"2026-11-24T07:00:01.000Z","queue_ms":2,"run_ms":3}],"next_cursor":"c1""#
            case "c1"?:
                fields = #""ok":true,"jobs":[{"job":"b1","state":"cancelled","worker":"w1","action":"sleep","submitted_at":"2026-11-24T07:00:02.000Z","queue_ms":5}],"next_cursor":"c2""#
            case "c2"? where refuseThird:
                fields = #""ok":false,"error":{"code":"shutting_down","message":"loopd is stopping"}"#
            case "c2"?:
                fields = #""ok":true,"jobs":[{"job":"c1-long-id","state":"timed_out","worker":"w3","action":"date","submitted_at":"2026-11-24T07:00:03.000Z","queue_ms":0,"run_ms":100000}],"next_cursor":null"#
            default:
                fields = #""ok":false,"error":{"code":"bad_request","message":"unknown cursor""#
            }
            return .lines([FakeServer.reply(to: request, fields)])
        }
    }

    @Test("--all follows the cursors over 3 pages on one connection and prints one table")
    func allPages() throws {
        let seen = SeenLines()
        let server = try Self.threePages(seen)
        defer { server.stop() }
        let captured = Captured()
        let status = Loopctl.execute(["jobs", "--all", "--socket", server.path, "--state", "completed", "--limit", "2"], in: captured.context())
        #expect(status == .ok)
        #expect(captured.err.isEmpty)
        #expect(captured.out == """
            JOB         STATE      WORKER  ACTION  SUBMITTED                 QUEUE    RUN
            a1          completed  w1      echo    2026-11-24T07:00:00.000Z    1ms    1ms
            a2          failed     w2      fail    2026-11-24T07:00:01.000Z    2ms    3ms
            b1          cancelled  w1      sleep   2026-11-24T07:00:02.000Z    5ms      -
            c1-long-id  timed_out  w3      date    2026-11-24T07:00:03.000Z    0ms  1m40s

            """)
        #expect(seen.all == [
            #"{"id":1,"op":"jobs","state":["completed"],"limit":2}"#,
            #"{"id":2,"op":"jobs","state":["completed"],"limit":2,"cursor":"c1"}"#,
            #"{"id":3,"op":"jobs","state":["completed"],"limit":2,"cursor":"c2"}"#,
        ])
    }

    @Test("--all --json prints each page's reply line as it came")
    func allPagesJSON() throws {
        let seen = SeenLines()
        let server = try Self.threePages(seen)
        defer { server.stop() }
        let captured = Captured()
        #expect(Loopctl.execute(["jobs", "--all", "--json", "--socket", server.path], in: captured.context()) == .ok)
        let lines = captured.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines.last == "")
        #expect(lines.prefix(3).map { (try? JSONParser.parse($0.utf8))?["next_cursor"] } == [.string("c1"), .string("c2"), .null])
        #expect(lines.first?.hasPrefix(#"{"id":1,"ok":true,"jobs":[{"job":"a1""#) == true)
    }

    @Test("--all stopped by a refusal: the pages read are printed, then the refusal, exit 5")
    func allPagesRefused() throws {
        let seen = SeenLines()
        let server = try Self.threePages(seen, refuseThird: true)
        defer { server.stop() }
        let captured = Captured()
        #expect(Loopctl.execute(["jobs", "--all", "--socket", server.path], in: captured.context()) == .refused)
        #expect(captured.out.split(separator: "\n").map { $0.prefix(3) } == ["JOB", "a1 ", "a2 ", "b1 "])
        #expect(captured.err == "loopctl: shutting_down: loopd is stopping\n")
    }

    @Test("--all with a daemon that hands back the cursor it was given stops with a protocol error")
    func allPagesStuckCursor() throws {
        let server = try FakeServer { request, _ in
            .lines([FakeServer.reply(to: request, #""ok":true,"jobs":[{"job":"x","state":"queued"}],"next_cursor":"same""#)])
        }
        defer { server.stop() }
        let captured = Captured()
        #expect(Loopctl.execute(["jobs", "--all", "--socket", server.path], in: captured.context()) == .protocolError)
        #expect(captured.err.contains("same cursor"))
        #expect(captured.out.hasPrefix("JOB"))
    }

    @Test("without --all, one page and the next-page line, even when the daemon has more")
    func onePageOnly() throws {
        let seen = SeenLines()
        let server = try Self.threePages(seen)
        defer { server.stop() }
        let captured = Captured()
        #expect(Loopctl.execute(["jobs", "--socket", server.path], in: captured.context()) == .ok)
        #expect(seen.all.count == 1)
        #expect(captured.out.hasSuffix("\nnext page: loopctl jobs --socket \(server.path) --cursor c1\n"))
        let json = Captured()
        #expect(Loopctl.execute(["jobs", "--json", "--socket", server.path, "--cursor", "c2"], in: json.context()) == .ok)
        #expect(json.out.hasSuffix(#""next_cursor":null}"# + "\n"))
        #expect(json.out.split(separator: "\n").count == 1)
    }
}
