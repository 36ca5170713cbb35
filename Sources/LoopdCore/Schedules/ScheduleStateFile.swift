import Glibc
import LoopPlatform
import LoopdProtocol

/// What loopd keeps of each schedule across restarts, in
/// `<state_dir>/schedules.json`: its last slot (so a restart catches up by
/// the schedule's policy, as systemd's `Persistent=true`, and never fires a
/// slot twice), its last job and whether it is paused. The file is small
/// (one line per schedule) and replaced whole: written to a temporary
/// file, synced, renamed over the old one, and the directory synced.
struct ScheduleStateFile {
    /// One schedule's saved state.
    struct Saved: Equatable {
        /// The schedule's `when` as it was (`ScheduleWhen.description`): a
        /// schedule whose `when` changed starts on its new grid.
        var spec: String
        var lastSlot: Int64?
        var lastJob: String?
        var paused = false
    }

    let path: String
    let fsync: Bool

    init(directory: String, fsync: Bool) {
        path = directory + "/schedules.json"
        self.fsync = fsync
    }

    /// The saved states by schedule name; an absent file is an empty one.
    /// A damaged file is reported, not fatal: schedules then start afresh.
    func load() -> Result<[String: Saved], ScheduleStateError> {
        let bytes: [UInt8]
        switch FileSystem.readFile(path, limit: 64 << 20) {
        case .success(let b): bytes = b
        case .failure(.errno(ENOENT)): return .success([:])
        case .failure(.errno(let code)): return .failure(ScheduleStateError("cannot read \(path): \(errnoText(code))"))
        case .failure(.tooLarge): return .failure(ScheduleStateError("\(path) is larger than 64 MiB"))
        }
        guard let json = try? JSONParser.parse(bytes), case .object(let schedules)? = json["schedules"] else {
            return .failure(ScheduleStateError("\(path) is not a schedules state file"))
        }
        var saved: [String: Saved] = [:]
        for (name, entry) in schedules {
            guard let spec = entry["spec"]?.stringValue else { continue }
            var s = Saved(spec: spec)
            if case .integer(let slot)? = entry["last_slot"] { s.lastSlot = slot }
            s.lastJob = entry["last_job"]?.stringValue
            s.paused = entry["paused"]?.boolValue ?? false
            saved[name] = s
        }
        return .success(saved)
    }

    /// Replaces the file with `states`.
    func save(_ states: [String: Saved]) throws(PlatformError) {
        let entries: [(String, JSON)] = states.keys.sorted().map { name in
            let s = states[name]!
            var fields: [(String, JSON)] = [("spec", .string(s.spec))]
            if let slot = s.lastSlot { fields.append(("last_slot", .integer(slot))) }
            if let job = s.lastJob { fields.append(("last_job", .string(job))) }
            if s.paused { fields.append(("paused", true)) }
            return (name, .object(fields))
        }
        let text = JSON.object([("schedules", .object(entries))]).serialized() + "\n"
        let temporary = path + ".new"
        let fd = try FileSystem.open(temporary, .readWrite(create: true, truncate: true))
        do {
            _ = try Descriptor.write(fd, Array(text.utf8), at: 0)
            if fsync { try Descriptor.syncData(fd) }
        } catch {
            Descriptor.closeOwned(fd)
            throw error
        }
        Descriptor.closeOwned(fd)
        try FileSystem.rename(temporary, over: path)
        if fsync { try FileSystem.syncDirectory(String(path[..<path.lastIndex(of: "/")!])) }
    }
}

struct ScheduleStateError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
