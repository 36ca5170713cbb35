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

    /// `malloc_usable_size(3)`: the bytes the allocation that `object`
    /// lives in can hold (its fields and the runtime's header), which is
    /// what holding it costs beyond the allocator's own word.
    public static func allocationSize(of object: AnyObject) -> Int {
        cloop_malloc_usable_size(Unmanaged.passUnretained(object).toOpaque())
    }
}
