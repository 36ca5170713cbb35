import CThreadCredentials
import Foundation
import Glibc
import LoopdProtocol
import Testing

/// A uid and its primary gid, as a client connects with them (no
/// supplementary groups).
struct Account: Sendable, CustomStringConvertible {
    let uid: UInt32
    let gid: UInt32

    /// Debian's `daemon`: the user loopd itself runs as here, so that the
    /// refusals are not skipped by "root may".
    static let loopd = Account(uid: 1, gid: 1)
    /// Clients: users with nothing in common.
    static let nobody = Account(uid: 65534, gid: 65534)
    static let bin = Account(uid: 2, gid: 2)
    static let wwwData = Account(uid: 33, gid: 33)
    /// An administrator by configuration (`server.admin_users`).
    static let sys = Account(uid: 3, gid: 3)
    static let root = Account(uid: 0, gid: 0)

    var description: String { "uid \(uid)" }
}

/// The real `loopd` binary (built beside the test bundle), run as a user
/// of its own (`Account.loopd`) on a private directory, with its clients
/// connecting as other users. Every test of what one user may see of
/// another's work goes through it: an in-process daemon runs as root, and
/// root may do everything, so its refusal paths would never run.
///
/// Needs root, to start loopd through setpriv(1) and to connect from
/// threads running as other uids (`CThreadCredentials`); `isAvailable`
/// says whether it can run here, and `unavailableReason` why not.
final class LoopdAsAnotherUser {
    let directory: String
    let socketPath: String
    private let process: Process

    /// Whether the tests can run: as root, with setpriv at hand.
    static let isAvailable = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    /// What a skipped test says.
    static let unavailableReason: Comment =
        "needs root and setpriv: loopd runs as uid 1 and its clients as uids 65534, 2, 33 and 3"

    /// Two automatic workers, w1 and w2.
    static let twoWorkers = "[[workers]]\nname = \"w1\"\n[[workers]]\nname = \"w2\"\n"

    /// Starts loopd as `Account.loopd` with `tables` (the TOML tables after
    /// `[server]` and `[journal]`: workers, actions), `[server]` keys
    /// `server` added to those the harness sets, `[quotas]` keys `quotas`
    /// and `[limits]` keys `limits` (each table empty by default: the
    /// documented defaults), and `environment` added to a bare one;
    /// returns once it answers a ping (bounded). With `execUser`, loopd
    /// holds the ambient capabilities its unit gives it (CAP_SETUID,
    /// CAP_SETGID, CAP_KILL) and runs exec children as that user; without,
    /// it has none and runs them as itself.
    init(tables: String = twoWorkers, server: String = "", quotas: String = "", limits: String = "",
         environment: [String: String] = [:], execUser: String? = nil) throws {
        directory = try Self.privateDirectory()
        socketPath = directory + "/loopd.sock"
        let config = """
            [server]
            socket = "\(socketPath)"
            state_dir = "\(directory)/state"
            socket_mode = "0666"
            \(server)
            [limits]
            \(limits)
            [quotas]
            \(quotas)
            [journal]
            fsync = false
            [exec]
            user = "\(execUser ?? "")"

            """ + tables
        let configPath = directory + "/loopd.toml"
        _ = FileManager.default.createFile(atPath: configPath, contents: Data(config.utf8),
                                           attributes: [.posixPermissions: 0o644])
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        let capabilities = execUser == nil ? [] : ["--inh-caps=+setuid,+setgid,+kill", "--ambient-caps=+setuid,+setgid,+kill"]
        process.arguments = ["--reuid=\(Account.loopd.uid)", "--regid=\(Account.loopd.gid)", "--clear-groups"] + capabilities +
            ["--", try Self.loopdBinary(), "--config", configPath]
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: directory + "/stderr") ?? FileHandle.nullDevice
        try process.run()
        let up = waitUntil { (try? TestClient(path: socketPath))?.call(#"{"id":0,"op":"ping"}"#)?.ok == true }
        if !up {
            stop()
            throw HarnessError.didNotStart(log: (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? "")
        }
    }

    /// A client connected as `account`: a thread of its own takes the
    /// account's credentials (and no supplementary groups) and connects,
    /// so the daemon reads them with SO_PEERCRED; the thread then ends and
    /// the connection serves any thread.
    func client(as account: Account) throws -> TestClient {
        let handoff = Handoff()
        let path = socketPath
        let thread = Thread {
            handoff.put(Result {
                guard cthreadcred_clear_groups() == 0, cthreadcred_set_effective_ids(account.uid, account.gid) == 0 else {
                    throw POSIXError(.init(rawValue: errno) ?? .EPERM)
                }
                return try TestClient(path: path)
            })
        }
        thread.start()
        return try handoff.take().get()
    }

    /// loopd's pid (setpriv executes it).
    var pid: Int32 { process.processIdentifier }

    /// SIGTERM, then (bounded) SIGKILL; removes the directory.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            if !waitUntil(30, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A directory loopd's user owns (its socket and state go there) and
    /// every client may pass through (mode 0755).
    private static func privateDirectory() throws -> String {
        let directory = makeTempDirectory()
        guard chown(directory, Account.loopd.uid, Account.loopd.gid) == 0, chmod(directory, 0o755) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EPERM)
        }
        return directory
    }

    /// The built loopd, or, when another user cannot reach it where it
    /// was built (a checkout in a private home directory), a copy of it in
    /// a directory everyone may read, made once.
    private static func loopdBinary() throws -> String {
        let built = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("loopd").path
        if everyoneMayExecute(built) { return built }
        return try copiedBinary.get(built)
    }

    private static let copiedBinary = CopiedBinary()

    /// Whether every directory above `path` may be searched, and `path`
    /// executed, by a user who is neither its owner nor in its group.
    private static func everyoneMayExecute(_ path: String) -> Bool {
        var url = URL(fileURLWithPath: path)
        while url.path != "/" {
            var st = stat()
            guard stat(url.path, &st) == 0, st.st_mode & S_IXOTH != 0 else { return false }
            url.deleteLastPathComponent()
        }
        return true
    }
}

/// Why the harness could not start loopd.
enum HarnessError: Error, CustomStringConvertible {
    case didNotStart(log: String)

    var description: String {
        switch self {
        case .didNotStart(let log): "loopd did not answer a ping as uid \(Account.loopd.uid); its stderr:\n\(log)"
        }
    }
}

/// One copy of the loopd binary that every user may execute, made on first use.
private final class CopiedBinary: @unchecked Sendable {
    private let lock = NSLock()  // guards `path`
    private var path: String?

    func get(_ built: String) throws -> String {
        try lock.withLock {
            if let path { return path }
            let directory = makeTempDirectory()
            let copy = directory + "/loopd"
            try FileManager.default.copyItem(atPath: built, toPath: copy)
            chmod(directory, 0o755)
            chmod(copy, 0o755)
            path = copy
            return copy
        }
    }
}

/// A value handed from the thread that made it to the one that waits for it.
private final class Handoff: @unchecked Sendable {
    private let lock = NSLock()  // guards `value`
    private let ready = DispatchSemaphore(value: 0)
    private var value: Result<TestClient, any Error>?

    func put(_ result: Result<TestClient, any Error>) {
        lock.withLock { value = result }
        ready.signal()
    }

    /// Waits (bounded) for the value.
    func take() -> Result<TestClient, any Error> {
        guard ready.wait(timeout: .now() + 30) == .success else { return .failure(POSIXError(.ETIMEDOUT)) }
        return lock.withLock { value ?? .failure(POSIXError(.EIO)) }
    }
}
