import Glibc
import LoopPlatform

/// Everything one exec job started: its main process, the process group it
/// leads (every descendant that does not leave it), and, where loopd makes
/// job cgroups, the job's cgroup (every descendant, whatever it does).
/// Worker thread only.
///
/// Signalling the group is safe from pid reuse as long as the main process
/// is not reaped: its zombie holds the group's id. So `ExecRun` reaps it
/// only after the tree's last signal.
struct ExecTree {
    /// The main process's pid, which is also the process group's id.
    let leader: pid_t
    let cgroup: Cgroup?

    /// SIGTERM to every process of the tree, once each: those of the
    /// cgroup (a descendant that left the process group with setsid
    /// included), else those of the process group.
    func terminate() {
        guard let cgroup else {
            ChildProcess.signalGroup(leader, SIGTERM)
            return
        }
        for pid in cgroup.processes() { SignalPlatform.sendSignal(SIGTERM, toProcess: pid) }
    }

    /// SIGKILL to every process of the tree: `cgroup.kill` where the
    /// kernel has it (processes forking meanwhile included), else each
    /// process of the cgroup, else the process group.
    func kill() {
        guard let cgroup else {
            ChildProcess.signalGroup(leader, SIGKILL)
            return
        }
        if !cgroup.canKill || (try? cgroup.kill()) == nil {
            for pid in cgroup.processes() { SignalPlatform.sendSignal(SIGKILL, toProcess: pid) }
        }
    }

    /// CPU time and peak memory of the whole tree from its cgroup, where
    /// the kernel counts them; nil without a cgroup.
    func cgroupUsage() -> (cpu: (user: UInt64, system: UInt64)?, memoryPeak: UInt64?)? {
        guard let cgroup else { return nil }
        return (cgroup.cpuMicroseconds(), cgroup.memoryPeakBytes())
    }
}
