import CLoopShims
import Glibc

/// Starting child processes: the daemon's exec jobs (contained, in
/// ContainedSpawn.swift) and the benchmarks' peers. Any thread; the thread
/// that starts a child owns its pid and pipes.
public enum ChildProcess {
    /// A started child and the read ends of its output pipes (non-blocking, CLOEXEC).
    public struct Started {
        public var pid: Int32
        public var stdout: Int32
        public var stderr: Int32
    }

    /// Spawns `path` with `argv` (no shell), stdin from /dev/null, stdout and
    /// stderr onto the given descriptors, no other inherited descriptor, and
    /// exactly `environment` (nil: this process's own). Returns the pid.
    public static func spawn(
        _ path: String, argv: [String], environment: [String: String]?, cwd: String, stdout: Int32, stderr: Int32
    ) throws(PlatformError) -> pid_t {
        let cArgv = CStrings(argv), cEnv = CStrings(environment: environment ?? ProcessEnvironment.current())
        var pid: pid_t = 0
        let rc = withExtendedLifetime((cArgv, cEnv)) { cloop_spawn(path, cArgv.pointers, cEnv.pointers, cwd, stdout, stderr, &pid) }
        guard rc == 0 else { throw PlatformError(call: "posix_spawn", errno: rc, detail: path) }
        return pid
    }

    /// NUL-terminated copies of strings, ended by a nil, as execve(2) takes
    /// an argv or an environment; freed with the value, so a caller keeps it
    /// alive (`withExtendedLifetime`) across the call that reads them.
    final class CStrings {
        let pointers: [UnsafeMutablePointer<CChar>?]

        init(_ strings: [String]) { pointers = strings.map { strdup($0) } + [nil] }

        /// `KEY=value` entries, sorted by key.
        convenience init(environment: [String: String]) {
            self.init(environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
        }

        deinit { for p in pointers { free(p) } }
    }

    /// Kills `pid` outright (SIGKILL) and reaps it with a blocking
    /// waitpid(2): for a child that cannot be watched. Best effort.
    public static func killAndReap(_ pid: Int32) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
