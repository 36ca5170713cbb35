/// A stable delay in `[0, maxMs)` for the schedule `name` on the host
/// `hostKey`, like systemd's `RandomizedDelaySec=` with `FixedRandomDelay=`:
/// the same name and host always get the same delay, so a schedule keeps
/// its rhythm across restarts, while different names (and hosts) spread
/// over the window instead of firing together. 0 when `maxMs` is 0 or less.
///
/// The hash is FNV-1a (64-bit) over the host key, a 0xFF byte (which UTF-8
/// never contains, so `ab`+`c` and `a`+`bc` differ) and the name, then
/// splitmix64's finalizer, because FNV-1a alone changes little in its high
/// bits when only the last byte differs (`job1`, `job2`). The high half of
/// hash × maxMs maps it to the window without modulo's bias. Not Swift's
/// `Hasher`, which is seeded per process. Changing any of this moves every
/// schedule's delay.
func scheduleJitter(name: String, hostKey: String, maxMs: Int64) -> Int64 {
    guard maxMs > 0 else { return 0 }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a offset basis
    func mix(_ byte: UInt8) {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3  // FNV-1a prime
    }
    hostKey.utf8.forEach(mix)
    mix(0xFF)
    name.utf8.forEach(mix)

    // splitmix64's finalizer: every input bit reaches every output bit.
    hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
    hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
    hash ^= hash >> 31

    return Int64(hash.multipliedFullWidth(by: UInt64(maxMs)).high)
}
