import Glibc

/// A directory of the cgroup v2 (unified) hierarchy, and the files of it
/// loopd uses: making and removing child groups, moving processes in,
/// killing everything in one (`cgroup.kill`), limits, and the CPU and
/// memory the kernel counts for it. Any thread; nothing here keeps state.
///
/// Which files exist depends on the host: `cgroup.procs`, `cgroup.events`
/// and `cpu.stat` always; `cgroup.kill` from Linux 5.14; the `memory.*`,
/// `pids.*` and `cpu.max` files only where those controllers are enabled
/// for the group, which on a hybrid host (v1 controllers, a unified
/// hierarchy without them) is never.
public struct Cgroup: Sendable, Hashable, CustomStringConvertible {
    /// The group's directory under the hierarchy's mount point.
    public let path: String

    public init(path: String) { self.path = path }

    public var description: String { path }

    /// The calling process's own group in the unified hierarchy, found from
    /// /proc/self/mountinfo (where `cgroup2` is mounted) and
    /// /proc/self/cgroup (the `0::` line); nil without a unified hierarchy.
    public static func ofThisProcess() -> Cgroup? {
        guard let mount = unifiedMountPoint(),
              let lines = text("/proc/self/cgroup"),
              let line = lines.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let own = String(line.dropFirst(3))
        return Cgroup(path: own == "/" ? mount : mount + own)
    }

    /// Where the unified hierarchy is mounted: /sys/fs/cgroup on a pure v2
    /// host, /sys/fs/cgroup/unified on a hybrid one.
    static func unifiedMountPoint() -> String? {
        guard let info = text("/proc/self/mountinfo") else { return nil }
        for line in info.split(separator: "\n") {
            // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER"
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count >= 5, fields[3] == "/" { return String(fields[4]) }
        }
        return nil
    }

    /// The child group `name`.
    public func child(_ name: String) -> Cgroup { Cgroup(path: path + "/" + name) }

    /// Makes this group (mkdir(2)); false when it exists already.
    @discardableResult
    public func create() throws(PlatformError) -> Bool {
        try FileSystem.makeDirectory(path, mode: 0o755)
    }

    /// Removes this group (rmdir(2)); `EBUSY` while a process is in it or
    /// it has children. A group that is gone already is not an error.
    public func remove() throws(PlatformError) {
        do {
            _ = try retryingInterrupts("rmdir", detail: path) { rmdir(path) }
        } catch where error.errno == ENOENT {
        }
    }

    /// The names of the child groups.
    public func children() -> [String] {
        ((try? FileSystem.directoryEntries(path)) ?? []).filter { FileSystem.isDirectory(path + "/" + $0) }
    }

    /// `cgroup.procs` opened for writing: a process that writes "0" to it
    /// joins the group. The caller closes it.
    public func openProcs() throws(PlatformError) -> Int32 {
        try FileSystem.open(path + "/cgroup.procs", .writeOnly)
    }

    /// Moves process `pid`, with all its threads, into this group.
    public func move(_ pid: Int32) throws(PlatformError) {
        try write("cgroup.procs", String(pid))
    }

    /// The processes in this group (not in its children).
    public func processes() -> [Int32] {
        (Cgroup.text(path + "/cgroup.procs") ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Whether a process is in this group or any of its children
    /// (`cgroup.events`: `populated 1`).
    public var isPopulated: Bool {
        guard let events = Cgroup.text(path + "/cgroup.events") else { return false }
        return events.split(separator: "\n").contains("populated 1")
    }

    /// Whether this kernel can kill a whole group at once (`cgroup.kill`, Linux 5.14).
    public var canKill: Bool { FileSystem.exists(path + "/cgroup.kill") }

    /// SIGKILL to every process in this group and its children, including
    /// those that fork meanwhile (`cgroup.kill`).
    public func kill() throws(PlatformError) {
        try write("cgroup.kill", "1")
    }

    /// The controllers this group may enable for its children (`cgroup.controllers`).
    public var availableControllers: Set<String> { words("cgroup.controllers") }

    /// The controllers enabled for this group's children (`cgroup.subtree_control`).
    public var enabledControllers: Set<String> { words("cgroup.subtree_control") }

    /// Enables `controllers` for this group's children. The kernel refuses
    /// (`EBUSY`) while processes sit in this group itself.
    public func enable(_ controllers: [String]) throws(PlatformError) {
        guard !controllers.isEmpty else { return }
        try write("cgroup.subtree_control", controllers.map { "+" + $0 }.joined(separator: " "))
    }

    /// Writes `value` to the group's file `name` (a limit such as
    /// `memory.max`, or one of the `cgroup.*` control files).
    public func write(_ name: String, _ value: String) throws(PlatformError) {
        let fd = try FileSystem.open(path + "/" + name, .writeOnly)
        defer { Descriptor.close(fd) }
        let bytes = Array(value.utf8)
        let n = try retryingInterrupts("write", detail: path + "/" + name) {
            bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        }
        if n != bytes.count { throw PlatformError(call: "write", errno: EIO, detail: path + "/" + name) }
    }

    /// CPU time the group's processes used, in microseconds, from
    /// `cpu.stat` (present in every group, controller or not).
    public func cpuMicroseconds() -> (user: UInt64, system: UInt64)? {
        guard let stat = Cgroup.text(path + "/cpu.stat") else { return nil }
        var user: UInt64?, system: UInt64?
        for line in stat.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = UInt64(parts[1]) else { continue }
            if parts[0] == "user_usec" { user = value } else if parts[0] == "system_usec" { system = value }
        }
        guard let user, let system else { return nil }
        return (user, system)
    }

    /// The most memory the group ever used, in bytes (`memory.peak`, Linux
    /// 5.19, with the memory controller); nil where the kernel keeps none.
    public func memoryPeakBytes() -> UInt64? {
        Cgroup.text(path + "/memory.peak").flatMap { UInt64($0.trimmingWhitespace()) }
    }

    private func words(_ name: String) -> Set<String> {
        Set((Cgroup.text(path + "/" + name) ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
    }

    /// A small pseudo-file's text; nil if it cannot be read.
    static func text(_ path: String) -> String? {
        guard case .success(let bytes) = FileSystem.readFile(path, limit: 1 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and newlines.
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
