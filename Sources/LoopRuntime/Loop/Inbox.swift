
/// What other threads hand a loop: the blocks queued by `perform`, and the
/// sleep handshake that decides who writes the loop's wake-up eventfd.
///
/// It lives in `Loop.inbox`, behind a mutex of its own, apart from the loop's
/// `lock` (modes, items, run state): a producer holds it only for an append
/// and never waits behind a mode change, a timer being scheduled, or the
/// loop's own bookkeeping between passes. When both are needed the loop's
/// `lock` is taken first, the inbox's inside it, never the other way round.
struct Inbox: ~Copyable {
    /// Blocks waiting for a pass of an admitting mode, in submission order.
    var blocks = BlockBuffer()
    /// Where the loop stands in the sleep handshake.
    var waiting = Waiting.awake(wakeRequested: false)

    /// The loop's side of the sleep handshake: one state at a time.
    enum Waiting: Equatable {
        /// Running passes. `wakeRequested`: `wakeUp()` was called, so the
        /// next wait must not block.
        case awake(wakeRequested: Bool)
        /// Busy-waiting before a sleep (`Loop.spinBeforeSleeping`): a waker
        /// pokes `Loop.spinPoke` instead of writing the eventfd.
        case spinning(wakeRequested: Bool)
        /// In, or committed to entering, a blocking wait. `signalled`: the
        /// wake eventfd was written during this sleep.
        case asleep(signalled: Bool)
    }

    /// What a waker must do after unlocking.
    enum Wake {
        case nothing
        /// Write the loop's eventfd: it sleeps.
        case signal
        /// Set `Loop.spinPoke`: it spins.
        case poke
    }

    /// Queues a block; returns what the caller must do after unlocking:
    /// only the first producer to find the loop asleep writes the eventfd.
    @inline(__always)
    mutating func append(_ slot: consuming BlockBuffer.Slot, modes: [Loop.Mode]?) -> Wake {
        blocks.append(slot, modes: modes)
        return signalIfSleeping()
    }

    /// A wake-up for an asleep (or spinning) loop: the eventfd is written
    /// at most once per sleep.
    @inline(__always)
    mutating func signalIfSleeping() -> Wake {
        switch waiting {
        case .spinning: return .poke
        case .asleep(signalled: false):
            waiting = .asleep(signalled: true)
            return .signal
        case .asleep(signalled: true), .awake: return .nothing
        }
    }

    /// `wakeUp()`: an asleep loop is signalled; an awake one will not block
    /// in its next wait.
    mutating func requestWake() -> Wake {
        switch waiting {
        case .asleep: return signalIfSleeping()
        case .awake:
            waiting = .awake(wakeRequested: true)
            return .nothing
        case .spinning:
            waiting = .spinning(wakeRequested: true)
            return .poke
        }
    }

    /// At the sleep decision: consumes a pending `wakeUp()` request and
    /// returns whether there was one.
    mutating func takeWakeRequest() -> Bool {
        guard case .awake(wakeRequested: true) = waiting else { return false }
        waiting = .awake(wakeRequested: false)
        return true
    }

    /// Whether a queued block may run in a pass of `mode`.
    func hasBlocks(for mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        blocks.admitsAny(mode: mode, modeIsCommon: modeIsCommon)
    }
}
