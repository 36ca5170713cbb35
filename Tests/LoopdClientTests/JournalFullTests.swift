import Foundation
import Glibc
import LoopdClient
import Testing

/// `journal_unavailable` needs a journal write that fails: the daemon's
/// state directory is a 1 MiB tmpfs, filled up with a file of its own
/// (as the "disk full" section of Tests/reliability/faults.py does).
@Suite("LoopdClient: journal_unavailable, on a full state disk")
struct JournalFullTests {
    /// docs/PROTOCOL.md, "submit": a `durable` job is acknowledged only once
    /// it is journaled; when the journal cannot be written the submit is
    /// refused with `journal_unavailable`, without a job for `wait: false`
    /// and with the failed job, which never runs, for a waited submit, while
    /// non-durable jobs keep working on the same connection. docs/clients/swift.md,
    /// "Retries": a `journalUnavailable` without `error.job` created nothing,
    /// so the submit can be sent again once the disk has room.
    @Test(.enabled(if: getuid() == 0, "needs root to mount a tmpfs"),
          .enabled(if: Tmpfs.canMount, "mounting a tmpfs is refused here (no CAP_SYS_ADMIN, e.g. in a container)"))
    func durableSubmitsOnAFullDiskThrowJournalUnavailableWhilePlainJobsRun() async throws {
        let directory = TestDaemon.makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        try #require(mkdir(state, 0o700) == 0)
        let mountError = Tmpfs.mount(at: state)
        try #require(mountError == nil, "mount -t tmpfs on \(state): \(String(cString: strerror(mountError ?? 0)))")
        defer { Tmpfs.unmount(state) }
        let d = TestDaemon(directory: directory)
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let durable = SubmitOptions(durable: true)
        let durableNoWait = SubmitOptions(wait: false, durable: true)
        #expect(try await client.submit("echo", ["room"], options: durable).output == "room")

        let filler = state + "/filler"
        try fill(filler)
        // A commit may still fit in the last page of journal.log: submit until
        // the first refusal (bounded).
        var refused: LoopdError?
        for i in 0..<200 where refused == nil {
            refused = await loopdError { try await client.submit("echo", ["probe\(i)"], options: durableNoWait) }
        }
        #expect(refused?.code == .journalUnavailable && refused?.code.isFromDaemon == true, "\(String(describing: refused))")
        #expect(refused != nil && refused?.job == nil, "a refusal without a job: nothing was made")

        // Waited for: the job got an id, failed without running, and says why.
        let waited = await loopdError { try await client.submit("echo", ["never"], options: durable) }
        #expect(waited?.code == .journalUnavailable, "\(String(describing: waited))")
        #expect(waited?.job?.state == .failed && waited?.job?.result == .object([]))
        if let job = waited?.job?.job {
            let status = try await client.status(job: job)
            #expect(status.state == .failed && status.error?.code == .journalUnavailable && status.startedAt == nil)
        }

        // Non-durable jobs on the same connection: accepted and run.
        #expect(try await client.submit("echo", ["still", "here"]).output == "still here")
        let plain = try await client.submit("echo", ["later"], options: .noWait)
        #expect(try await client.wait(job: plain.job).output == "later")
        #expect(client.isConnected)
        #expect(try await client.ping().version == LoopdVersion.current)

        // Room again: the refused submit, sent again, is journaled and runs.
        try #require(unlink(filler) == 0)
        #expect(try await client.submit("echo", ["again"], options: durable).output == "again")
        await client.close()
    }
}

/// Mounting a 1 MiB tmpfs, as `mount -t tmpfs -o size=1m,mode=0700 tmpfs DIR`.
private enum Tmpfs {
    /// Mounts one at `path`; nil, or the `errno` of a refused mount.
    static func mount(at path: String) -> Int32? {
        Glibc.mount("tmpfs", path, "tmpfs", 0, "size=1m,mode=0700") == 0 ? nil : errno
    }

    /// Unmounts `path`, lazily (`umount -l`): also while something holds it open.
    static func unmount(_ path: String) {
        _ = umount2(path, Int32(MNT_DETACH))
    }

    /// Whether this process may mount a tmpfs (tried on a scratch directory).
    static let canMount: Bool = {
        let directory = TestDaemon.makeTempDirectory()
        defer { rmdir(directory) }
        guard mount(at: directory) == nil else { return false }
        unmount(directory)
        return true
    }()
}

/// Writes to a new file at `path` until its filesystem is full (ENOSPC).
private func fill(_ path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    for size in [65536, 4096, 1] {  // big writes, then the odd bytes left
        let block = [UInt8](repeating: 0xff, count: size)
        while true {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, size) }
            if n == size { continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno != ENOSPC { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            break
        }
    }
}
