// LoopdBench: loopd end to end over its Unix socket, against a real loopd
// child process, with redis-server (PING over a Unix socket, driven by
// redis-benchmark) measured in the same run as the machine's reference.
//
//   LoopdBench            full run: 5 rounds, about 2 minutes
//   LoopdBench --quick    smoke test: 1 short round, well under 60 s
//   LoopdBench --operations  round trips of status, wait, jobs and cancel
//   LoopdBench --instructions  instructions and allocations per job (valgrind)
//   LoopdBench --versus-beanstalkd  loopd beside beanstalkd, four workloads
//   … --pin CPU           the whole run (every process, every thread) on one CPU
//
// Exit status: 0 when everything ran (missed targets print MISS but do not
// fail, unless --strict); 1 on an error (a bad reply, loopd died, …);
// 2 on a usage error; 3 when the whole run hit its time limit.
import LoopPlatform

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
if let cpu = options.pin {
    // Before any thread or child exists, so that all of them inherit it.
    do throws(BenchError) {
        try Affinity.pin(to: cpu)
    } catch {
        writeStandard(2, "LoopdBench: \(error)\n")
        exitProcess(2)
    }
}
Children.installEmergencyHandlers()
let watchdog = Watchdog()
Children.startWatchdog(seconds: options.quick ? 58 : options.instructions ? 900 : 290, finished: watchdog)
let status: Int32
if options.instructions {
    status = InstructionsBench(binary: options.loopdBinary, tmpBase: options.tmpBase, jobs: options.instructionJobs,
                               keep: options.keep).run()
} else if options.versusBeanstalkd {
    status = VersusBench(options).run()
} else if options.operations {
    let binary = options.loopdBinary
    status = OperationsBench(binary: binary, tmpBase: options.tmpBase, pin: options.pin).run()
} else {
    status = Bench(options).run()
}
watchdog.done.store(true, ordering: .releasing)
exitProcess(status)
