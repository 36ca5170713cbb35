import LoopPlatform

struct Options {
    var quick = false
    var strict = false
    var rounds: Int?
    var loopdPath: String?

    /// The daemon to test: `--loopd`, else the release loopd of the package
    /// this benchmark package sits in (`../.build/release/loopd` from
    /// Benchmarks/), else a loopd next to this executable.
    var loopdBinary: String {
        if let loopdPath { return loopdPath }
        let here = Files.executableDirectory() ?? "."
        // here = <repository>/Benchmarks/.build/<triple>/release
        let built = here + "/../../../../.build/release/loopd"
        return Files.isExecutable(built) ? built : here + "/loopd"
    }
    var tmpBase = "/tmp"
    var keep = false
    /// loopd's server.log_level; nil: its default (info: one record per finished job).
    var logLevel: String?
    /// Drive the many-client scenarios with a thread per client instead of
    /// one thread polling every connection (redis-benchmark's way, the default).
    var threadPerClient = false
    /// `server.spin_before_sleeping_us` of the second loopd, which the
    /// `seq1spin` row measures (the first runs loopd's default, no spin).
    var spinUs = 50
    /// Measurements to run (default all): seq1 seq1client seq1spin c16 pipe64 pipe64client c50 durable redis
    /// prio64 exec1 exec16 (prio64: random priorities, beside beanstalkd; exec1 and exec16: the exec action
    /// `true`, a child process per job).
    var only: Set<String>?
    /// Measure the round trips of the job operations instead (`--operations`).
    var operations = false
    /// Count instructions and heap allocations per job under valgrind instead (`--instructions`).
    var instructions = false
    /// The jobs of `--instructions`' long runs (its short runs have a tenth).
    var instructionJobs = 2000
    /// Count no wake-ups with perf, even when it could (`--no-perf`).
    var noPerf = false
    /// loopd beside beanstalkd in four workloads instead (`--versus-beanstalkd`).
    var versusBeanstalkd = false
    /// The one CPU every process of the run is confined to (`--pin CPU`);
    /// nil: unpinned.
    var pin: Int?
    static let measurements: Set<String> = ["seq1", "seq1client", "seq1spin", "c16", "pipe64", "pipe64client", "c50",
                                            "durable", "redis", "prio64", "exec1", "exec16"]

    static let usage = """
        usage: LoopdBench [--quick] [--strict] [--rounds N] [--loopd PATH] [--tmp DIR] [--keep] [--log-level L] [--operations]
                  [--only seq1,seq1client,seq1spin,c16,pipe64,pipe64client,c50,durable,redis,prio64,exec1,exec16]
                  [--thread-per-client] [--spin-us N] [--no-perf] [--instructions [--jobs N]]
                  [--versus-beanstalkd] [--pin CPU]
          --quick      short smoke run (CI); exits 0 even when targets are missed
          --strict     exit 1 when a target is missed
          --rounds N   repetitions of every measurement (default 5, quick 1); medians are reported
          --loopd PATH the daemon to test (default: the repository's .build/release/loopd)
          --tmp DIR    where the run's socket/state/log directory is made (default /tmp;
                       put it on a real disk: the durable scenario fsyncs there)
          --keep       keep that directory (loopd.log, journal, redis-benchmark output)
          --only LIST  run only these measurements (for profiling); the table shows the rest as —
                       (seq1client and pipe64client, the rows through the Swift client library
                       LoopdClient, are judged against seq1 and pipe64: run those too; exec1 and exec16
                       submit the exec action true, /bin/true, with 1 and 16 clients)
          --spin-us N  the opt-in row seq1spin: 1 client, sequential, against a second loopd
                       with server.spin_before_sleeping_us = N (default 50; 1...10000)
          --log-level L  loopd's server.log_level (default: loopd's default, info, which logs every job)
          --thread-per-client  drive the 16- and 50-client scenarios with a blocking thread per client
                       (default: one thread polling every connection, as redis-benchmark -c N does)
          --operations round trips of status, wait, jobs and cancel of a running job instead
                       (2000 samples of status and wait, 200 of jobs and cancel)
          --no-perf    count no wake-ups with perf (the context switches from /proc stay)
          --instructions  instructions (valgrind's callgrind) and heap allocations (dhat) per job instead,
                       of loopd and beanstalkd, 1 client, sequential: each the difference between a run of
                       N jobs and one of N/10, ÷ the difference in jobs; under a minute
          --jobs N     N for --instructions (default 2000; 100...100000)
          --versus-beanstalkd  loopd beside beanstalkd 1.12 instead, in four workloads, each server's run of
                       each measured back to back every round: submit1 and submit50 (1 and 50 clients, submit
                       not waited / put), cycle1 and cycle50 (a job's whole life: submit waited /
                       put + reserve + delete); jobs/s, server CPU, switches and wake-ups per job, and the
                       loopd ÷ beanstalkd ratios; needs beanstalkd (--rounds, --quick, --no-perf apply)
          --pin CPU    confine every process of the run (this benchmark, loopd, beanstalkd, redis, perf, all
                       their threads) to CPU number CPU, set on this process before it starts any; the
                       report's header says which CPUs each process could use (default: unpinned; with
                       --instructions it only slows valgrind down)
        """

    static func parse(_ args: [String]) -> Options {
        var o = Options()
        var k = 0
        func value() -> String {
            k += 1
            guard k < args.count else { fail("\(args[k - 1]) needs a value") }
            return args[k]
        }
        while k < args.count {
            switch args[k] {
            case "--quick": o.quick = true
            case "--strict": o.strict = true
            case "--rounds":
                guard let n = Int(value()), (1...20).contains(n) else { fail("--rounds takes 1...20") }
                o.rounds = n
            case "--loopd": o.loopdPath = value()
            case "--tmp": o.tmpBase = value()
            case "--keep": o.keep = true
            case "--log-level": o.logLevel = value()
            case "--thread-per-client": o.threadPerClient = true
            case "--operations": o.operations = true
            case "--instructions": o.instructions = true
            case "--no-perf": o.noPerf = true
            case "--versus-beanstalkd": o.versusBeanstalkd = true
            case "--pin":
                guard let n = Int(value()), n >= 0, n < 1024 else { fail("--pin takes a CPU number, 0...1023") }
                o.pin = n
            case "--jobs":
                guard let n = Int(value()), (100...100_000).contains(n) else { fail("--jobs takes 100...100000") }
                o.instructionJobs = n
            case "--spin-us":
                guard let n = Int(value()), (1...10_000).contains(n) else { fail("--spin-us takes 1...10000") }
                o.spinUs = n
            case "--only":
                let names = Set(value().split(separator: ",").map(String.init))
                guard names.isSubset(of: measurements) else { fail("--only takes \(measurements.sorted().joined(separator: ","))") }
                o.only = names
            case "-h", "--help":
                print(usage)
                exitProcess(0)
            default: fail("unknown argument \(args[k])")
            }
            k += 1
        }
        return o
    }

    private static func fail(_ message: String) -> Never {
        writeStandard(2, "LoopdBench: \(message)\n\(usage)\n")
        exitProcess(2)
    }
}

