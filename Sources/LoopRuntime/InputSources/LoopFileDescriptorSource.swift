import LoopPlatform

/// A version-1 source watching a descriptor you own for readability and/or
/// writability (the CFFileDescriptor / CFSocket role). Level-triggered: the
/// handler is called on every pass while the descriptor is ready and the
/// interest is set, so read until `EAGAIN` or clear the interest.
/// Invalidate it before closing the descriptor.
public final class LoopFileDescriptorSource: @unchecked Sendable {
    /// The watched descriptor (not owned: you close it, after `invalidate()`).
    public let fileDescriptor: Int32
    let core: KernelSource

    /// What became ready.
    public struct Readiness: Sendable, Equatable {
        /// Data (or end of file) can be read.
        public var readable: Bool
        /// Data can be written.
        public var writable: Bool
        /// The peer hung up or the descriptor has an error pending.
        public var hangup: Bool
    }

    /// Watches `fd` for `interest`; `handler` runs on the loop's thread.
    public init(fileDescriptor fd: Int32, interest: IOInterest = .readable, order: Int = 0,
                _ handler: @escaping @Sendable (Readiness) -> Void) {
        fileDescriptor = fd
        core = KernelSource(fd: fd, interest: interest, order: order,
                            label: { "fd source fd = \(fd)" },
                            handler: { event, _ in
                                handler(Readiness(readable: event.readable, writable: event.writable, hangup: event.hangup))
                            })
        core.adopt(owner: self)
    }

    /// What readiness is watched; an empty set pauses the source. Any thread.
    public var interest: IOInterest {
        get { core.interest }
        set { core.setInterest(newValue) }
    }

    /// False once invalidated.
    public var isValid: Bool { core.isValid }

    /// Stops watching, synchronously: afterwards the descriptor may be closed.
    public func invalidate() { core.invalidate() }

    deinit { core.invalidate() }
}

extension Loop {
    /// Adds a descriptor source to `mode` (or every common mode).
    public func add(_ source: LoopFileDescriptorSource, forMode mode: Mode) { add(source.core, forMode: mode) }
    /// Removes a descriptor source from `mode`.
    public func remove(_ source: LoopFileDescriptorSource, forMode mode: Mode) { remove(source.core, forMode: mode) }
    /// Whether the descriptor source is in `mode`.
    public func contains(_ source: LoopFileDescriptorSource, inMode mode: Mode) -> Bool { contains(source.core, inMode: mode) }
}
