import Glibc

/// Secret random bytes from the kernel's generator, for keys.
///
/// Read from `/dev/urandom` rather than asked of Swift's `Hasher` or
/// `SystemRandomNumberGenerator`: `Hasher`'s seed is fixed when the
/// environment sets `SWIFT_DETERMINISTIC_HASHING`, and a key must never
/// depend on how a process was started. (`getrandom(2)` is not among the
/// calls the Glibc module exposes; the device gives the same bytes.) Any
/// thread.
public enum RandomBytes {
    /// The path read: the kernel's generator, which does not block once it
    /// has been seeded at boot.
    public static let source = "/dev/urandom"

    /// `count` bytes from the kernel's generator; throws when the device
    /// cannot be opened or read (a chroot without `/dev`, say).
    public static func read(_ count: Int) throws(PlatformError) -> [UInt8] {
        let fd = try FileSystem.open(source, .readOnly)
        defer { Descriptor.closeOwned(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        // `withUnsafe…Bytes` rethrows untyped errors, so carry ours out as a Result.
        try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(PlatformError) in
                var done = 0
                while done < count {
                    let n = try retryingInterrupts("read", detail: source) { Glibc.read(fd, raw.baseAddress! + done, count - done) }
                    // A character device that ends is not a generator.
                    guard n > 0 else { throw PlatformError(call: "read", errno: EIO, detail: source) }
                    done += n
                }
            }
        }.get()
        return bytes
    }
}
