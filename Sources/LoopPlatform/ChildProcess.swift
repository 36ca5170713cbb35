import CLoopShims
import Glibc

/// Starting `exec` actions' children: the only place the daemon forks.
/// Any thread; the worker that starts a child owns its pid and pipes.
public enum ChildProcess {
    /// A started child and the read ends of its output pipes (non-blocking, CLOEXEC).
    public struct Started {
        public var pid: Int32
        public var stdout: Int32
        public var stderr: Int32
    }

    /// Spawns `argv` (argv[0] an absolute path; no shell) with exactly `env`,
    /// in `cwd`, stdin from /dev/null and no inherited descriptors.
    public static func spawn(argv: [String], env: [String: String], cwd: String) throws(PlatformError) -> Started {
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        _ = try retryingInterrupts("pipe2") { cloop_pipe(&out) }
        do {
            _ = try retryingInterrupts("pipe2") { cloop_pipe(&err) }
        } catch {
            Descriptor.close(out[0]); Descriptor.close(out[1])
            throw error
        }
        let pid: pid_t
        do {
            pid = try spawn(argv[0], argv: argv, environment: env, cwd: cwd, stdout: out[1], stderr: err[1])
        } catch {
            for fd in out + err { Descriptor.close(fd) }
            throw error
        }
        // The child has its own copies of the write ends.
        Descriptor.close(out[1])
        Descriptor.close(err[1])
        return Started(pid: pid, stdout: out[0], stderr: err[0])
    }

    /// Spawns `path` with `argv` (no shell), stdin from /dev/null, stdout and
    /// stderr onto the given descriptors, no other inherited descriptor, and
    /// exactly `environment` (nil: this process's own). Returns the pid.
    public static func spawn(
        _ path: String, argv: [String], environment: [String: String]?, cwd: String, stdout: Int32, stderr: Int32
    ) throws(PlatformError) -> pid_t {
        var cArgv = argv.map { strdup($0) }
        cArgv.append(nil)
        var cEnv = (environment ?? ProcessEnvironment.current())
            .sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") }
        cEnv.append(nil)
        defer {
            for p in cArgv { free(p) }
            for p in cEnv { free(p) }
        }
        var pid: pid_t = 0
        let rc = cloop_spawn(path, cArgv, cEnv, cwd, stdout, stderr, &pid)
        guard rc == 0 else { throw PlatformError(call: "posix_spawn", errno: rc, detail: path) }
        return pid
    }

    /// Kills `pid` outright (SIGKILL) and reaps it with a blocking
    /// waitpid(2): for a child that cannot be watched. Best effort.
    public static func killAndReap(_ pid: Int32) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
