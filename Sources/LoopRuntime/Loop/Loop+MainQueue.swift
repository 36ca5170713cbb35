import LoopPlatform

extension Loop {
    /// Watches (or stops watching) libdispatch's main-queue eventfd, the
    /// Linux stand-in for the port Core Foundation listens on (R27).
    func setMainQueueWatched(_ watched: Bool) {
        let fd = DispatchMainQueue.descriptor
        guard fd >= 0 else { return }  // dispatchMain() owns the main queue
        if watched {
            do { try backend.watch(fd, interest: .readable, token: Loop.mainQueueToken) } catch { return }
        } else {
            backend.unwatch(fd)
        }
        mainQueueRegistered = watched
    }

    /// Whether a run of `mode` counts the Dispatch main queue as one of its
    /// sources (R3, R27): on the main thread's loop, in the default mode or
    /// a common mode, unless the run is nested inside a main-queue block.
    /// Such a run is never empty. Lock held; loop thread only.
    func servesMainQueueLocked(in mode: Mode) -> Bool {
        isMain && mainQueueDrains == 0 && DispatchMainQueue.descriptor >= 0
            && (mode == .default || isCommonModeLocked(mode))
    }

    /// Runs the blocks and `@MainActor` jobs queued on the Dispatch main
    /// queue. The eventfd is read first: libdispatch signals it again if work
    /// remains, and reading after the drain could swallow that signal.
    /// While the blocks run, the queue is out of the epoll set, so a run
    /// nested in one neither wakes for the queue nor drains it again (R27).
    func serveMainQueue() {
        let fd = DispatchMainQueue.descriptor
        guard fd >= 0 else { return }
        DispatchMainQueue.acknowledge(fd)
        setMainQueueDrains(mainQueueDrains + 1)
        defer { setMainQueueDrains(mainQueueDrains - 1) }
        callout { DispatchMainQueue.drain() }
    }

    /// Changes the drain depth and has the next pass rebuild its epoll set,
    /// which then adds or drops the main queue.
    private func setMainQueueDrains(_ depth: Int) {
        lock.withLock {
            mainQueueDrains = depth
            kernelSetDirty.store(true, ordering: .relaxed)
        }
    }
}
