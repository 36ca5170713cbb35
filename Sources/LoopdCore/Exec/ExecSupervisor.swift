import LoopPlatform
import Synchronization

/// What every exec action of one daemon shares: the job cgroups, if this
/// host gives loopd any, and how many job trees are alive (shutdown waits
/// for none). Any thread.
final class ExecSupervisor: Sendable {
    /// nil: job trees are process groups only.
    let cgroups: JobCgroups?
    /// Why there are no job cgroups, for the start-up record and for config
    /// errors about limits that need them.
    let cgroupsUnavailable: String?
    private let live = Atomic<Int>(0)

    init(cgroups: JobCgroups?, unavailable: String?) {
        self.cgroups = cgroups
        cgroupsUnavailable = unavailable
    }

    /// Job cgroups as `[exec] cgroup` asks, with the controllers the
    /// config's limits need, and the memory controller where the host
    /// delegates it, for each job's peak memory.
    static func make(_ config: DaemonConfig, startedAtUnixMs: Int64) -> ExecSupervisor {
        guard config.exec.cgroup == .auto else {
            return ExecSupervisor(cgroups: nil, unavailable: "[exec] cgroup = \"off\"")
        }
        let wanted = ExecContainment.controllers(config).union(["memory"])
        switch JobCgroups.prepare(wanting: wanted, stateDirectory: config.server.stateDirectory,
                                  daemonStartedAtUnixMs: startedAtUnixMs) {
        case .success(let cgroups): return ExecSupervisor(cgroups: cgroups, unavailable: nil)
        case .failure(let why): return ExecSupervisor(cgroups: nil, unavailable: why.reason)
        }
    }

    /// Job trees started and not yet ended.
    var liveTrees: Int { live.load(ordering: .acquiring) }

    func treeStarted() { live.wrappingAdd(1, ordering: .relaxed) }
    func treeEnded() { live.wrappingSubtract(1, ordering: .releasing) }
}
