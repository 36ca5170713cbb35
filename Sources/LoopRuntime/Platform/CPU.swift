import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Tells the CPU this thread is busy-waiting (x86 `pause`), so a spin
/// costs less power and yields the core's pipeline to a sibling thread.
@inline(__always)
func relaxCPU() { cloop_cpu_relax() }

/// Offers this thread's CPU to another runnable thread (`sched_yield`);
/// returns at once when none is waiting.
@inline(__always)
func yieldCPU() { _ = sched_yield() }
