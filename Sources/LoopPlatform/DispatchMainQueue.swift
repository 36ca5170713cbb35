import CLoopShims
import Dispatch  // links libdispatch, whose private hooks are declared in CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// libdispatch's main queue as Core Foundation reaches it on Linux (R27):
/// an eventfd that becomes readable when blocks are queued, and the call
/// that runs them. Private libdispatch entry points, declared in CLoopShims.
public enum DispatchMainQueue {
    /// The queue's eventfd; negative when `dispatchMain()` owns the queue.
    public static var descriptor: Int32 { _dispatch_get_main_queue_handle_4CF() }

    /// Clears the eventfd's counter (libdispatch signals it again if work
    /// remains after a drain).
    public static func acknowledge(_ fd: Int32) {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }

    /// Runs the blocks and `@MainActor` jobs queued now.
    public static func drain() { _dispatch_main_queue_callback_4CF(nil) }
}
