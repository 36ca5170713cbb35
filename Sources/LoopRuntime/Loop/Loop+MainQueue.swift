import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

extension Loop {
    /// Watches (or stops watching) libdispatch's main-queue eventfd, the
    /// Linux stand-in for the port Core Foundation listens on (R27).
    func setMainQueueWatched(_ watched: Bool) {
        let fd = _dispatch_get_main_queue_handle_4CF()
        guard fd >= 0 else { return }  // dispatchMain() owns the main queue
        if watched {
            do { try epoll.add(fd, interest: .readable, token: Loop.mainQueueToken) } catch { return }
        } else {
            epoll.remove(fd)
        }
        mainQueueRegistered = watched
    }

    /// Runs the blocks and `@MainActor` jobs queued on the Dispatch main
    /// queue. The eventfd is read first: libdispatch signals it again if work
    /// remains, and reading after the drain could swallow that signal.
    func serveMainQueue() {
        let fd = _dispatch_get_main_queue_handle_4CF()
        guard fd >= 0 else { return }
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
        callout { _dispatch_main_queue_callback_4CF(nil) }
    }
}
