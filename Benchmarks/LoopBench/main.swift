import LoopPlatform

// LoopBench: LoopRuntime side by side with Dispatch, SwiftNIO, Foundation's
// RunLoop and a raw epoll queue, in one process. See `Options.usage`.

if CommandLine.arguments.count >= 4, CommandLine.arguments[1] == RSSProbe.flag {
    exitProcess(RSSProbe.child(CommandLine.arguments[2], threads: Int(CommandLine.arguments[3]) ?? 0))
}

let options: Options
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error):
    print(error.message)
    exitProcess(error.exitCode)
}

let started = monotonicNanoseconds()
let machineBusy0 = MachineLoad.busyNanoseconds(), ownBusy0 = MachineLoad.ownNanoseconds()
print(options.header())
var targets: [TargetCheck] = []
for section in options.sections {
    sleepSeconds(0.5)  // a gap between sections, so one's teardown does not bleed into the next
    let (table, checks) = section.run(options)
    print(table.render())
    targets += checks
}

var summary = MarkdownTable(title: "Targets", columns: ["section", "target", "measured", "verdict"])
for check in targets { summary.add([check.section, check.target, check.measured, check.verdict]) }
let missed = targets.filter { $0.passed == false }.count
let wall = Double(monotonicNanoseconds() - started) / 1e9
let others = Double((MachineLoad.busyNanoseconds() - machineBusy0) - (MachineLoad.ownNanoseconds() - ownBusy0)) / 1e9
summary.notes = [
    "\(targets.count - missed) of \(targets.count) met; total run time \(Format.fixed(wall, 1)) s.",
    "Other processes used \(Format.fixed(max(others, 0), 1)) CPU-seconds meanwhile (\(Format.percent(max(others, 0) / wall)) of one CPU)"
        + (others / wall > 0.1 ? ": the machine was not quiet, rerun for clean figures." : "."),
]
print(summary.render())
exitProcess(options.strict && missed > 0 ? 1 : 0)
