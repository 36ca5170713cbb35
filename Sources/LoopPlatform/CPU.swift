import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Tells the CPU this thread is busy-waiting (x86 `pause`), so a spin
/// costs less power and yields the core's pipeline to a sibling thread.
@inlinable
public func relaxCPU() { cloop_cpu_relax() }

/// Offers this thread's CPU to another runnable thread (`sched_yield`);
/// returns at once when none is waiting.
@inlinable
public func yieldCPU() { _ = sched_yield() }
