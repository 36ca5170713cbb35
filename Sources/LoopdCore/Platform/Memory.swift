import Glibc

/// The allocator's side of the daemon's memory.
enum Memory {
    /// `malloc_trim(3)`, looked up once in the process's own symbols: glibc
    /// has it, but `malloc.h` is not part of Swift's Glibc module. Nil under
    /// a C library without it, where trimming is then a no-op.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// `malloc_trim(0)`: hands the free memory of every malloc arena (the
    /// main thread's and the workers') back to the kernel, so the resident
    /// size falls after a burst instead of staying at its peak. Costs a walk
    /// over the free lists: call it when idle, not per job. Returns whether
    /// any memory was released.
    @discardableResult
    static func trim() -> Bool { (mallocTrim?(0) ?? 0) != 0 }
}
