import LoopPlatform

/// `LoopdBench --operations`: the round trip of the requests that look at
/// and steer jobs that exist, one client, sequential, against a loopd that
/// knows `retained` finished jobs. Each figure is request written → reply
/// read; a sleeping job is cancelled while it runs, so that row includes
/// stopping it. No peer has the same requests, so the `status` row is the
/// reference: a lookup by id through the same path.
struct OperationsBench {
    let binary: String
    let tmpBase: String
    /// The CPU of `--pin`, for the header (nil: unpinned).
    let pin: Int?
    /// Samples of the cheap requests; a tenth of that of `jobs` and cancel.
    let rounds = 2000
    /// Finished jobs the daemon holds while `jobs` pages through them.
    let retained = 10_000

    /// Runs every measurement, prints the table; the process exit status.
    func run() -> Int32 {
        let directory: String
        let daemon: LoopdProcess
        do throws(BenchError) {
            directory = try Files.makeTempDirectory(base: tmpBase, prefix: "loopd-ops-")
            daemon = try LoopdProcess(binary: binary, directory: directory, workers: 2, logLevel: "notice")
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
        defer { _ = daemon.stop() }
        do throws(BenchError) {
            let c = try Connection(path: daemon.socketPath)
            progress("filling the job table with \(retained) finished jobs")
            for k in 0..<retained {
                try expectOK(c.roundTrip(#"{"id":\#(k),"op":"submit","action":"noop","worker":"w2"}"#))
            }
            let done = try jobID(c.roundTrip(#"{"id":"d","op":"submit","action":"noop","worker":"w2"}"#))
            var rows: [(String, [UInt64])] = []
            rows.append(("status of a finished job", try time(rounds) { _ throws(BenchError) in
                try expectOK(c.roundTrip(#"{"id":1,"op":"status","job":"\#(done)"}"#))
            }))
            rows.append(("wait for a finished job", try time(rounds) { _ throws(BenchError) in
                try expectOK(c.roundTrip(#"{"id":1,"op":"wait","job":"\#(done)"}"#))
            }))
            rows.append(("jobs: first page of 100 (of \(retained + 1))", try time(rounds / 10) { _ throws(BenchError) in
                try expectOK(c.roundTrip(#"{"id":1,"op":"jobs","limit":100}"#))
            }))
            rows.append(("jobs: state running, none among \(retained + 1)", try time(rounds / 10) { _ throws(BenchError) in
                try expectOK(c.roundTrip(#"{"id":1,"op":"jobs","state":"running"}"#))
            }))
            rows.append(("cancel of a running sleep", try cancelRunning(c, rounds / 10)))
            out("## loopd job operations, round trips (1 client, sequential)\n")
            out("- loopd: `\(binary)`, 2 workers, \(retained) finished jobs retained, log_level notice")
            out(Affinity.headerLine(pinned: pin, processes: [("benchmark", processID()), ("loopd", daemon.pid)]))
            out("- \(onlineCPUCount()) CPUs, load average: \(Processes.loadAverage())\n")
            out("| operation | samples | p50 | p99 |")
            out("|---|---|---|---|")
            for (name, samples) in rows {
                let p = Percentiles(samples)
                out("| \(name) | \(samples.count) | \(Format.latency(p.percentile(50))) | \(Format.latency(p.percentile(99))) |")
            }
            return 0
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
    }

    /// `n` timed calls of `body`, in ns each.
    private func time(_ n: Int, _ body: (Int) throws(BenchError) -> Void) throws(BenchError) -> [UInt64] {
        var samples: [UInt64] = []
        samples.reserveCapacity(n)
        for k in 0..<n {
            let t0 = monotonicNanoseconds()
            try body(k)
            samples.append(monotonicNanoseconds() - t0)
        }
        return samples
    }

    /// Submits a long sleep to w1, waits (untimed) until it runs, then times
    /// the cancel, whose reply comes once the job has ended.
    private func cancelRunning(_ c: Connection, _ n: Int) throws(BenchError) -> [UInt64] {
        var samples: [UInt64] = []
        for _ in 0..<n {
            let job = try jobID(c.roundTrip(#"{"id":1,"op":"submit","action":"sleep","args":["60000"],"worker":"w1","wait":false}"#))
            var state = ""
            for _ in 0..<10_000 where state != "running" {
                let reply = try c.roundTrip(#"{"id":2,"op":"status","job":"\#(job)"}"#)
                state = reply.contains(#""state":"running""#) ? "running" : ""
            }
            guard state == "running" else { throw BenchError("job \(job) never started") }
            let t0 = monotonicNanoseconds()
            let reply = try c.roundTrip(#"{"id":3,"op":"cancel","job":"\#(job)"}"#)
            samples.append(monotonicNanoseconds() - t0)
            guard reply.contains(#""cancelled":true"#) else { throw BenchError("cancel did not cancel: \(reply)") }
        }
        return samples
    }

    private func expectOK(_ reply: String) throws(BenchError) {
        guard reply.contains(#""ok":true"#) else { throw BenchError("unexpected reply: \(reply)") }
    }

    /// The `job` field of an ok reply.
    private func jobID(_ reply: String) throws(BenchError) -> String {
        try expectOK(reply)
        guard let start = reply.range(of: #""job":""#)?.upperBound,
              let end = reply[start...].firstIndex(of: "\"") else { throw BenchError("no job id in \(reply)") }
        return String(reply[start..<end])
    }
}
