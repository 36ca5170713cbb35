import CLoopShims

/// The allocator's side of the process's memory.
public enum Memory {
    /// `malloc_trim(0)`: hands the free memory of every malloc arena (the
    /// main thread's and the other threads') back to the kernel, so the
    /// resident size falls after a burst instead of staying at its peak.
    /// Costs a walk over the free lists: call it when idle, not per job.
    /// Returns whether any memory was released.
    @discardableResult
    public static func trim() -> Bool { cloop_malloc_trim(0) != 0 }
}
