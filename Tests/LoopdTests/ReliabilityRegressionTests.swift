import LoopPlatform
import Foundation
import Glibc
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Regression tests for daemon bugs the reliability scripts
/// (Tests/reliability/, docs/RELIABILITY.md) found. Each test is named
/// after its bug.
@Suite(.serialized) struct ReliabilityRegressionTests {
    /// Bug durable-reorder (found by Tests/reliability/load.py): a durable
    /// job waits for the next journal commit before its worker gets it, but
    /// a non-durable job pipelined behind it to the same worker was handed
    /// over at once and ran first, breaking "a worker runs its jobs in
    /// arrival order" (PROTOCOL.md, Jobs).
    @Test func durableReorder_jobsBehindADurableJobOnItsWorkerKeepArrivalOrder() throws {
        let log = OrderLog()
        let d = RunningDaemon(register: { $0.register(action: RecordingAction(log: log), named: "record") })
        defer { d.stop() }
        let c = try d.client()
        let count = 60
        var lines = ""
        for i in 0..<count {
            let durable = i % 3 == 0 ? #","durable":true"# : ""
            lines += #"{"id":\#(i),"op":"submit","action":"record","args":["0","\#(i)"],"worker":"w1","wait":false\#(durable)}"# + "\n"
        }
        c.send(raw: Array(lines.utf8))  // one write: durable and plain jobs arrive in one main-loop pass
        var acknowledged = 0
        for _ in 0..<count where c.readReply()?.ok == true { acknowledged += 1 }
        #expect(acknowledged == count)
        #expect(c.call(#"{"id":"end","op":"submit","action":"noop","worker":"w1"}"#)?.ok == true)
        #expect(log.entries.map(\.1) == Array(0..<count))
    }

    /// Bug journal-never-compacted (found by Tests/reliability/load.py):
    /// nothing in the daemon called `JobJournal.compactIfNeeded()`, so
    /// journal.log grew by every durable job for the daemon's lifetime and
    /// finished jobs past `retention_seconds` were never dropped from
    /// memory. With retention 0 and more than the 8 MiB compaction
    /// threshold of durable jobs, the log must shrink back.
    @Test func journalNeverCompacted_runningDaemonCompactsItsJournal() throws {
        let d = RunningDaemon { $0.journal.retentionSeconds = 0 }
        defer { d.stop() }
        let c = try d.client()
        let payload = String(repeating: "x", count: 60_000)
        // Each job writes about 120 kB (its submit and finish records): 100
        // jobs pass the 8 MiB threshold with everything dead.
        for i in 0..<100 {
            let r = c.call(#"{"id":\#(i),"op":"submit","action":"echo","args":["\#(payload)"],"durable":true}"#)
            #expect(r?["state"] == "completed")
        }
        #expect(c.call(#"{"id":"last","op":"submit","action":"noop","durable":true}"#)?.ok == true)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: d.directory + "/state/journal.log")[.size] as? Int)
        #expect(size < 8 << 20, "journal.log is \(size) bytes after 12 MB of dead records")
    }

    /// Bug durable-results-held-while-idle (found by the 10-minute soak of
    /// Tests/reliability/load.py, whose RSS stayed up after the load):
    /// finished durable jobs past `retention_seconds` were forgotten only
    /// when a later journal commit ran, so an idle daemon held every result
    /// of its last busy period. A timer now expires them; `stats` shows it.
    @Test func durableResultsHeldWhileIdle_retainedFinishesExpireWithoutFurtherWork() throws {
        let d = RunningDaemon { $0.journal.retentionSeconds = 10 }
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"submit","action":"echo","args":["kept"],"durable":true}"#)?["state"] == "completed")
        // The finish is committed at the end of the main-loop pass that
        // answered: a stats request can overtake it. Then nothing appends to
        // the journal any more, so only the timer can expire it.
        var seen: [Int64?] = []
        // The retention is long enough that a stalled test thread still
        // sees the finish retained first.
        for i in 0..<1200 where !(seen.contains(1) && seen.last == 0) {  // up to 60 s, far past the 10 s retention
            seen.append(c.call(#"{"id":"s\#(i)","op":"stats"}"#)?["journal"]?["retained_finished"]?.integerValue)
            usleep(50_000)
        }
        #expect(seen.contains(1), "the finish was retained: \(seen)")
        #expect(seen.last == 0, "and expired: \(seen.suffix(3))")
    }

    /// Bug supplementary-groups-ignored (found by Tests/reliability/privilege.py):
    /// the server checked `allow_groups` against the client's primary gid
    /// only, never its supplementary groups, although the config documents
    /// "primary or supplementary". The peer's groups now come from
    /// SO_PEERGROUPS. A socketpair's peer is this process: its groups are
    /// getgroups(2)'s.
    @Test func supplementaryGroupsIgnored_peerCarriesTheClientsSupplementaryGroups() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var mine = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
        mine = Array(mine.prefix(Int(getgroups(Int32(mine.count), &mine))))
        let peer = try #require(UnixSocket.peer(fds[0]))
        #expect(peer.uid == getuid())
        #expect(Set(peer.groups) == Set(mine))
    }

    /// The same bug end to end, with a client that really is someone else:
    /// `nobody` with only a supplementary group (root needed for setpriv).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func supplementaryGroupsIgnored_allowGroupsAdmitsAMemberThroughASupplementaryGroup() throws {
        let group: UInt32 = 4242
        let d = RunningDaemon { config in
            config.server.socketMode = 0o666
            var echo = DaemonConfig.Action()
            echo.allowGroups = [group]
            config.actions["echo"] = echo
        }
        defer { d.stop() }
        chmod(d.directory, 0o755)  // let nobody reach the socket; its mode 0666 is the gate here
        func echo(groups: String) throws -> String {
            let client = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            s.sendall(b'{"id":1,"op":"submit","action":"echo","args":["hi"]}\\n')
            print(s.recv(4096).decode().strip())
            """
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments = ["--reuid=65534", "--regid=65534", groups, "--", "/usr/bin/python3", "-c", client, d.socketPath]
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            p.waitUntilExit()
            return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        #expect(try echo(groups: "--groups=\(group)").contains(#""output":"hi""#))
        #expect(try echo(groups: "--clear-groups").contains(#""code":"forbidden""#))
    }

    /// Bug clean-stop-replays-finished-job (found by Tests/reliability/crash.py,
    /// its final clean stop): on SIGTERM the daemon waited only while a
    /// worker had a job running. A job its worker had just finished, whose
    /// result had not reached the main thread yet, was not waited for; its
    /// finish record missed the last commit and the next start ran the
    /// durable job again although the daemon had stopped cleanly. The action
    /// here holds its worker for 300 ms after it completes, before the result
    /// can leave, which makes the window certain.
    @Test func cleanStopReplaysFinishedJob_aFinishedDurableJobDoesNotRunAgainAfterACleanStop() throws {
        let state = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let runs = RunCounter()
        func daemon() -> RunningDaemon {
            RunningDaemon(configure: { $0.server.stateDirectory = state },
                          register: { $0.register(action: ResultHeldAction(runs: runs), named: "held") })
        }
        let first = daemon()
        let r = try first.client().call(#"{"id":1,"op":"submit","action":"held","durable":true,"wait":false}"#)
        #expect(r?.ok == true)
        #expect(waitUntil { runs.value == 1 })
        first.stop()
        let second = daemon()
        defer { second.stop() }
        // A replay would be queued at start and run at once; give it time.
        _ = try second.client().call(#"{"id":2,"op":"submit","action":"noop","worker":"w1"}"#)
        _ = try second.client().call(#"{"id":3,"op":"submit","action":"noop","worker":"w2"}"#)
        #expect(runs.value == 1, "the finished durable job ran again after a clean stop")
    }
}

/// Counts runs, from any thread.
final class RunCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// Completes at once, but first queues a block that keeps its worker's
/// thread busy for 300 ms: the job is over on the worker while its result
/// waits behind that block.
struct ResultHeldAction: JobAction {
    let runs: RunCounter

    func start(_ context: ActionContext) {
        runs.increment()
        context.loop.perform { usleep(300_000) }
        context.complete(.success(.object([])))
    }
}

