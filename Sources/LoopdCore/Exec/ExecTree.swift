import Glibc
import LoopPlatform

/// Everything one exec job started: its main process, the process group it
/// leads (every descendant that does not leave it), and, where loopd makes
/// job cgroups, the job's cgroup (every descendant, whatever it does).
/// Worker thread only.
///
/// Signalling the process group is safe from pid reuse as long as the main
/// process is not reaped: its zombie holds the group's id. So `ExecRun`
/// reaps it only after the group's last signal. A tree with a cgroup is
/// signalled through the cgroup alone.
struct ExecTree {
    /// The main process's pid, which is also the process group's id.
    let leader: pid_t
    let cgroup: Cgroup?
    /// What the job cgroups offer (nil without them).
    let cgroups: JobCgroups?

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
        if cgroups?.canKill != true || (try? cgroup.kill()) == nil {
            for pid in cgroup.processes() { SignalPlatform.sendSignal(SIGKILL, toProcess: pid) }
        }
    }

    /// What the whole tree used, from its cgroup: CPU time always, the
    /// peak memory where the memory controller keeps one. Nil without a
    /// cgroup.
    func cgroupUsage() -> (cpu: (user: UInt64, system: UInt64)?, memoryPeak: UInt64?)? {
        guard let cgroup else { return nil }
        return (cgroup.cpuMicroseconds(), cgroups?.countsMemory == true ? cgroup.memoryPeakBytes() : nil)
    }

    /// Once the main process is reaped: removes the cgroup if nothing is
    /// left in it (the usual end, one rmdir), else kills what is. Returns
    /// whether the cgroup is gone (true without one).
    func removeOrKill() -> Bool {
        guard let cgroup else { return true }
        do {
            try cgroup.remove()
            return true
        } catch {
            // EBUSY: what the job left still runs.
            kill()
            return false
        }
    }
}
