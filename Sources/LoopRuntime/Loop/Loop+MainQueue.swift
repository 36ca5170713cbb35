import LoopPlatform


extension Loop {
    /// Watches (or stops watching) libdispatch's main-queue eventfd, the
    /// Linux stand-in for the port Core Foundation listens on (R27).
    func setMainQueueWatched(_ watched: Bool) {
        let fd = DispatchMainQueue.descriptor
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
        let fd = DispatchMainQueue.descriptor
        guard fd >= 0 else { return }
        DispatchMainQueue.acknowledge(fd)
        callout { DispatchMainQueue.drain() }
    }
}
