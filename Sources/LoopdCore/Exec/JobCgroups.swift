import Glibc
import LoopPlatform
import Synchronization

/// The cgroups of exec jobs: one per running job, under
/// `<loopd's own cgroup>/loopd-jobs`, each named `<daemon>.<n>` where
/// `<daemon>` is `<state>-<pid>-<start>-<random>`: which state directory
/// the daemon serves (a hash of its path), and this instance of it, so that
/// daemons sharing a cgroup never collide, and a loopd cleans up only what
/// an earlier run of itself (the same state directory) was killed with. Made at start where loopd may write its own cgroup: under the
/// shipped unit (`Delegate=yes`), or as root on the unified hierarchy.
///
/// Limits (`tasks_max`, `memory_max`, `cpu_max`) need their controllers
/// enabled down to the job groups. The kernel allows that only for a group
/// without processes of its own, so when loopd's own group has to pass
/// controllers on, loopd first moves itself into a leaf beside the jobs
/// (`loopd-daemon`), as systemd expects of a service that delegates.
///
/// Any thread: the counter is atomic, everything else immutable.
final class JobCgroups: Sendable {
    /// The parent of every job group.
    let root: Cgroup
    /// The controllers enabled for job groups.
    let controllers: Set<String>
    /// Whether this kernel kills a whole group at once (`cgroup.kill`,
    /// Linux 5.14): learnt once, not per job.
    let canKill: Bool
    /// Whether job groups keep a peak of their memory (`memory.peak`: the
    /// memory controller).
    var countsMemory: Bool { controllers.contains("memory") }
    private let daemon: String
    /// The state directory's part of `daemon`.
    private let state: String
    private let counter = Atomic<UInt64>(0)

    private init(root: Cgroup, controllers: Set<String>, daemon: String, state: String) {
        self.root = root
        self.controllers = controllers
        canKill = root.canKill
        self.daemon = daemon
        self.state = state
    }

    /// A state directory's name part: FNV-1a of its absolute path, base 36.
    private static func stateTag(_ directory: String) -> String {
        let path = directory.hasPrefix("/") ? directory : FileSystem.currentDirectory() + "/" + directory
        var hash: UInt32 = 2_166_136_261
        for byte in path.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return String(hash, radix: 36)
    }

    /// Where job groups cannot be made, and why: what a config error names.
    struct Unavailable: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Job groups under this process's own cgroup, with `wanted`
    /// controllers enabled for them where the host delegates them (those it
    /// does not are simply left out: a limit that needs one fails at
    /// `ExecContainment.resolve` with the reason).
    static func prepare(wanting wanted: Set<String>, stateDirectory: String,
                        daemonStartedAtUnixMs: Int64) -> Result<JobCgroups, Unavailable> {
        guard let own = Cgroup.ofThisProcess() else {
            return .failure(Unavailable(reason: "this host has no unified (v2) cgroup hierarchy"))
        }
        let root = own.child("loopd-jobs")
        do {
            try root.create()
        } catch {
            return .failure(Unavailable(reason: "loopd cannot make \(root): \(errnoText(error.errno))"))
        }
        // Made by another user (an earlier loopd run as root, say).
        guard FileSystem.isWritableDirectory(root.path) else {
            return .failure(Unavailable(reason: "loopd may not make groups in \(root)"))
        }
        var enabled: Set<String> = []
        let delegated = wanted.intersection(own.availableControllers)
        if !delegated.isEmpty {
            enabled = enable(delegated, under: own, jobs: root)
        }
        let state = stateTag(stateDirectory)
        let daemon = "\(state)-\(processID())-\(String(UInt64(max(0, daemonStartedAtUnixMs)), radix: 36))-"
            + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return .success(JobCgroups(root: root, controllers: enabled, daemon: daemon, state: state))
    }

    /// Enables `controllers` on `own` and on the jobs' root; returns those
    /// that reached the job groups.
    private static func enable(_ controllers: Set<String>, under own: Cgroup, jobs: Cgroup) -> Set<String> {
        let wanted = controllers.sorted()
        if !own.enabledControllers.isSuperset(of: controllers) {
            do {
                try own.enable(wanted)
            } catch where error.errno == EBUSY {
                // Processes sit in `own` itself: move this daemon into a
                // leaf of its own, then enable.
                let leaf = own.child("loopd-daemon")
                guard (try? leaf.create()) != nil, (try? leaf.move(processID())) != nil,
                      (try? own.enable(wanted)) != nil else { return [] }
            } catch {
                return []
            }
        }
        _ = try? jobs.enable(wanted)
        return jobs.enabledControllers.intersection(controllers)
    }

    /// A new, empty group for one job, with `limits` written (file, value).
    func makeGroup(limits: [(file: String, value: String)]) throws(PlatformError) -> Cgroup {
        var group: Cgroup
        repeat {
            // A name in use is another daemon's group (or one this daemon
            // left behind): never share it.
            group = root.child("\(daemon).\(counter.wrappingAdd(1, ordering: .relaxed).newValue)")
        } while try !group.create()
        for limit in limits {
            do {
                try group.write(limit.file, limit.value)
            } catch {
                try? group.remove()
                throw error
            }
        }
        return group
    }

    /// Kills and removes the job groups that an earlier run of this loopd
    /// (the same state directory) left when it was killed outright
    /// (SIGKILL, a crash), and removes the empty ones any loopd that is
    /// gone left. A group is left alone while the loopd that made it still
    /// runs: its pid names a process that started no later than that loopd
    /// did (a pid reused since, this loopd's own included, does not count).
    /// No other loopd's processes are ever killed.
    func removeLeftovers() -> Int {
        var removed = 0
        for name in root.children() where !name.hasPrefix(daemon + ".") {
            let parts = name.split(separator: "-")
            guard parts.count == 4, let pid = Int32(parts[1]),
                  let started = Int64(parts[2], radix: 36) else { continue }
            // /proc knows a start to the clock tick after a boot time known to the second.
            if let running = processStartedAtUnixMilliseconds(pid), running <= started + 2_000 { continue }
            let group = root.child(name)
            guard parts[0] == state || !group.isPopulated else { continue }
            if canKill { try? group.kill() }
            for pid in group.processes() { SignalPlatform.sendSignal(SIGKILL, toProcess: pid) }
            // The killed take a moment to leave the group (EBUSY until then).
            for _ in 0..<100 {
                if (try? group.remove()) != nil {
                    removed += 1
                    break
                }
                blockThread(milliseconds: 10)
            }
        }
        return removed
    }
}
