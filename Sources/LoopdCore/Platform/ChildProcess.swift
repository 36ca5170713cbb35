import CLoopShims
import Glibc

/// Starting `exec` actions' children: the only place the daemon forks.
/// Any thread; the worker that starts a child owns its pid and pipes.
enum ChildProcess {
    /// A started child and the read ends of its output pipes (non-blocking, CLOEXEC).
    struct Started {
        var pid: Int32
        var stdout: Int32
        var stderr: Int32
    }

    /// Spawns `argv` (argv[0] an absolute path; no shell) with exactly `env`,
    /// in `cwd`, stdin from /dev/null and no inherited descriptors.
    static func spawn(argv: [String], env: [String: String], cwd: String) throws(SystemError) -> Started {
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        _ = try retrying("pipe2") { cloop_pipe(&out) }
        do {
            _ = try retrying("pipe2") { cloop_pipe(&err) }
        } catch {
            Descriptor.close(out[0]); Descriptor.close(out[1])
            throw error
        }
        var cArgv = argv.map { strdup($0) }
        cArgv.append(nil)
        var cEnv = env.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") }
        cEnv.append(nil)
        defer {
            for p in cArgv { free(p) }
            for p in cEnv { free(p) }
        }
        var pid: pid_t = 0
        let rc = cloop_spawn(argv[0], cArgv, cEnv, cwd, out[1], err[1], &pid)
        Descriptor.close(out[1])
        Descriptor.close(err[1])
        guard rc == 0 else {
            Descriptor.close(out[0]); Descriptor.close(err[0])
            throw SystemError("posix_spawn", errno: rc, detail: argv[0])
        }
        return Started(pid: pid, stdout: out[0], stderr: err[0])
    }

    /// Kills `pid` outright (SIGKILL) and reaps it with a blocking
    /// waitpid(2): for a child that cannot be watched. Best effort.
    static func killAndReap(_ pid: Int32) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
