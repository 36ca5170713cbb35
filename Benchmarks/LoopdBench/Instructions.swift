// `LoopdBench --instructions`: what a job costs a server in instructions
// and heap allocations, counted by valgrind instead of timed, so the figures
// hardly move with what else the machine does.
import LoopPlatform

/// Instructions (callgrind's Ir, every thread of the server) and heap
/// allocations (dhat) per job, 1 client, sequential. A server's start and
/// shutdown cost the same whatever the jobs, so each figure is the
/// difference between a run of `jobs` jobs and one of `jobs / 10`, divided
/// by the difference in jobs: the cost of one more job.
struct InstructionsBench {
    let binary: String
    let tmpBase: String
    let jobs: Int
    let keep: Bool

    /// One sequential client's workload and the server it runs on.
    enum Workload: CaseIterable {
        /// loopd: `noop` submitted and waited for, the reply once it ran (a job's whole life).
        case loopdWaited
        /// loopd: `noop` submitted without `wait`, acknowledged once queued (it then runs).
        case loopdAsync
        /// beanstalkd: `put`, then `reserve-with-timeout 0` and `delete` (a job's whole life).
        case beanstalkCycle
        /// beanstalkd: `put` (the job stays).
        case beanstalkPut

        var name: String {
            switch self {
            case .loopdWaited: "submit, waited: the whole cycle"
            case .loopdAsync: "submit without wait"
            case .beanstalkCycle: "put + reserve + delete: the whole cycle"
            case .beanstalkPut: "put"
            }
        }

        var server: String {
            switch self {
            case .loopdWaited, .loopdAsync: "loopd"
            case .beanstalkCycle, .beanstalkPut: "beanstalkd"
            }
        }
    }

    static let columns = ["workload (1 client, sequential)", "server", "instructions/job", "allocations/job",
                          "bytes allocated/job"]

    /// What valgrind counted in one run.
    private struct Counts {
        var instructions: Int?
        var allocations: Int?
        var bytes: Int?
    }

    /// Runs every workload, prints the table; the process exit status (0
    /// without valgrind: the table then says why it is empty).
    func run() -> Int32 {
        guard let valgrind = Files.which("valgrind") else {
            out("## Instructions and allocations per job (valgrind)\n")
            out("- not counted: valgrind not found (Debian: valgrind)\n")
            var table = MarkdownTable(columns: Self.columns)
            for workload in Workload.allCases { table.add([workload.name, workload.server, "—", "—", "—"]) }
            out(table.render())
            return 0
        }
        guard Files.isExecutable(binary) else {
            writeStandard(2, "LoopdBench: no loopd at \(binary) (build it, or name one with --loopd PATH)\n")
            return 1
        }
        let directory: String
        do throws(BenchError) {
            directory = try Files.makeTempDirectory(base: tmpBase, prefix: "loopd-instructions-")
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
        let started = monotonicNanoseconds()
        let loopd: String
        do throws(BenchError) {
            loopd = try withoutDebugInformation(binary, directory: directory)
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
        let short = max(jobs / 10, 1)
        var table = MarkdownTable(columns: Self.columns)
        var errors: [String] = []
        var beanstalkMissing: String?
        for workload in Workload.allCases {
            if workload.server == "beanstalkd", Files.which("beanstalkd") == nil {
                beanstalkMissing = "beanstalkd not found (make setup-bench puts it in .build/tools/bin)"
                table.add([workload.name, workload.server, "—", "—", "—"])
                continue
            }
            var perJob = Counts()
            do throws(BenchError) {
                let runs = try [short, jobs].map { n throws(BenchError) in
                    try measure(workload, jobs: n, valgrind: valgrind, loopd: loopd, directory: directory)
                }
                func difference(_ field: KeyPath<Counts, Int?>) -> Int? {
                    runs[1][keyPath: field].flatMap { long in runs[0][keyPath: field].map { long - $0 } }
                }
                perJob = Counts(instructions: difference(\.instructions), allocations: difference(\.allocations),
                                bytes: difference(\.bytes))
            } catch {
                errors.append("\(workload.server), \(workload.name): \(error)")
                progress("\(workload.server), \(workload.name): \(error.description.prefix { $0 != "\n" })")
            }
            let extra = Double(jobs - short)
            func each(_ count: Int?, _ digits: Int) -> String {
                count.map { digits == 0 ? Format.count(Double($0) / extra) : Format.fixed(Double($0) / extra, digits) }
                    ?? "—"
            }
            table.add([workload.name, workload.server, each(perJob.instructions, 0), each(perJob.allocations, 1),
                       each(perJob.bytes, 0)])
        }
        out("## Instructions and allocations per job (valgrind)\n")
        out("- loopd: `\(binary)`, 2 workers, journal fsync on, log_level default (info: a record per job)")
        out("- beanstalkd: " + (beanstalkMissing ?? "on a Unix socket, no binlog"))
        out("- each figure: (run of \(Format.count(Double(jobs))) jobs − run of \(Format.count(Double(short)))) "
            + "÷ \(Format.count(Double(jobs - short))); instructions: callgrind's Ir, all of the server's threads; "
            + "allocations: dhat's blocks (malloc, calloc, realloc, new), and their bytes\n")
        out(table.render())
        out("- the run took \(Format.fixed(Double(monotonicNanoseconds() - started) / 1e9, 1)) s")
        if !errors.isEmpty {
            out("\nErrors:")
            for e in errors { out("- \(e)") }
        }
        Files.removeRunDirectory(directory, keep: keep)
        return errors.isEmpty ? 0 : 1
    }

    /// Counts `workload` of `jobs` jobs: once under callgrind, once under dhat.
    private func measure(_ workload: Workload, jobs: Int, valgrind: String, loopd: String,
                         directory: String) throws(BenchError) -> Counts {
        let name = "\(workload)-\(jobs)"
        let callgrindOut = directory + "/callgrind.\(name).out", callgrindLog = directory + "/callgrind.\(name).log"
        try serve(workload, jobs: jobs, loopd: loopd, directory: directory + "/callgrind-\(name)",
                  wrapper: [valgrind, "--tool=callgrind", "--callgrind-out-file=" + callgrindOut,
                            "--log-file=" + callgrindLog])
        let dhatOut = directory + "/dhat.\(name).json", dhatLog = directory + "/dhat.\(name).log"
        try serve(workload, jobs: jobs, loopd: loopd, directory: directory + "/dhat-\(name)",
                  wrapper: [valgrind, "--tool=dhat", "--dhat-out-file=" + dhatOut, "--log-file=" + dhatLog])
        var counts = Counts()
        counts.instructions = Self.callgrindTotal(Files.read(callgrindOut) ?? "")
        (counts.bytes, counts.allocations) = Self.dhatTotal(Files.read(dhatLog) ?? "")
        guard counts.instructions != nil else { throw BenchError("callgrind wrote no total (\(callgrindLog))") }
        guard counts.allocations != nil else { throw BenchError("dhat printed no total (\(dhatLog))") }
        progress("\(workload.server), \(workload.name), \(jobs) jobs: \(Format.count(Double(counts.instructions ?? 0))) "
                 + "instructions, \(Format.count(Double(counts.allocations ?? 0))) allocations")
        return counts
    }

    /// Starts the workload's server under `wrapper` in `directory`, runs
    /// `jobs` jobs through one connection, one at a time, and stops the
    /// server, which makes valgrind write its counts.
    private func serve(_ workload: Workload, jobs: Int, loopd binary: String, directory: String,
                       wrapper: [String]) throws(BenchError) {
        do {
            _ = try FileSystem.makeDirectory(directory, mode: 0o700)
        } catch {
            throw BenchError("mkdir \(directory): \(errnoText(error.errno))")
        }
        switch workload {
        case .loopdWaited, .loopdAsync:
            let loopd = try LoopdProcess(binary: binary, directory: directory, workers: 2, logLevel: nil,
                                         wrapper: wrapper, readySeconds: 120)
            defer { _ = loopd.stop(graceSeconds: 60) }
            let connection = try Connection(path: loopd.socketPath, ioTimeoutSeconds: 60)
            let request = workload == .loopdWaited ? Request.noopWait : Request.noopAsync
            for id in 1...Int64(jobs) {
                connection.enqueue(id: id, suffix: request)
                try connection.flush()
                try connection.receive { (reply) throws(BenchError) in
                    guard reply == id else { throw BenchError("reply for id \(reply), expected \(id)") }
                }
            }
            try loopd.waitIdle(seconds: 120)
        case .beanstalkCycle, .beanstalkPut:
            let beanstalk = try BeanstalkReference.start(directory: directory, wrapper: wrapper)
            defer { _ = beanstalk.stop(graceSeconds: 60) }
            let connection = try BeanstalkConnection(path: beanstalk.socketPath, ioTimeoutSeconds: 60)
            for _ in 0..<jobs {
                try connection.put()
                if workload == .beanstalkCycle { try connection.reserveAndDelete() }
            }
        }
    }

    /// A copy of `binary` in `directory` without its DWARF debug information
    /// (`strip --strip-debug`), its symbols kept: valgrind 3.19 (Debian 12)
    /// gives up on the DWARF 5 that Swift's toolchain writes. The function
    /// names valgrind reports come from the symbol table.
    private func withoutDebugInformation(_ binary: String, directory: String) throws(BenchError) -> String {
        guard let strip = Files.which("strip") else {
            progress("no strip (Debian: binutils): valgrind runs loopd as built, and may not read its debug information")
            return binary
        }
        let copy = directory + "/loopd"
        let pid = try Processes.spawn(strip, ["--strip-debug", "-o", copy, binary], cwd: directory,
                                      logPath: directory + "/strip.log")
        guard Processes.waitExit(pid, seconds: 60) == "exited 0" else {
            throw BenchError("strip --strip-debug \(binary) failed: \(Files.read(directory + "/strip.log") ?? "")")
        }
        return copy
    }

    /// The `summary:` (else `totals:`) line of a callgrind output file: its
    /// first event, Ir.
    static func callgrindTotal(_ text: String) -> Int? {
        for key in ["summary:", "totals:"] {
            if let line = text.split(separator: "\n").last(where: { $0.hasPrefix(key) }),
               let first = line.dropFirst(key.count).split(separator: " ").first {
                return Int(first)
            }
        }
        return nil
    }

    /// (bytes, blocks) of dhat's `Total: X bytes in Y blocks` line.
    static func dhatTotal(_ log: String) -> (Int?, Int?) {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("Total:") }).map(String.init),
              let after = line.range(of: "Total:")?.upperBound else { return (nil, nil) }
        let words = line[after...].split(separator: " ").map { $0.filter { $0 != "," } }
        guard words.count >= 5, words[1] == "bytes", words[2] == "in" else { return (nil, nil) }
        return (Int(words[0]), Int(words[3]))
    }
}
