import LoopPlatform

/// A version-1 source delivering Unix signals through a signalfd, so a
/// handler runs on the loop's thread like any other event (no async-signal
/// restrictions).
///
/// The signals must be blocked in every thread, or the kernel may run their
/// default action instead: call `LoopSignalSource.block(_:)` on the main
/// thread before starting any other thread.
public final class LoopSignalSource: @unchecked Sendable {
    /// The signals it receives.
    public let signals: [Int32]
    private let fd: Int32
    let core: KernelSource

    /// Blocks `signals` in the calling thread and in threads it starts later.
    public static func block(_ signals: [Int32]) { SignalPlatform.block(signals) }

    /// A source for `signals`; `handler` gets each arrival's number.
    public init(signals: [Int32], order: Int = 0, _ handler: @escaping @Sendable (Int32) -> Void) throws(PlatformError) {
        self.signals = signals
        let fd = try SignalPlatform.openSignalFD(signals)
        self.fd = fd
        core = KernelSource(fd: fd, interest: .readable, order: order, closesDescriptor: true,
                            label: { "signal source fd = \(fd) signals = \(signals)" },
                            handler: { _, _ in
                                for s in SignalPlatform.readSignals(fd) { handler(s) }
                            })
        core.adopt(owner: self)
    }

    /// False once invalidated.
    public var isValid: Bool { core.isValid }

    /// Stops receiving and closes the descriptor.
    public func invalidate() {
        core.invalidate()
    }

    deinit { invalidate() }
}

extension Loop {
    /// Adds a signal source to `mode` (or every common mode).
    public func add(_ source: LoopSignalSource, forMode mode: Mode) { add(source.core, forMode: mode) }
    /// Removes a signal source from `mode`.
    public func remove(_ source: LoopSignalSource, forMode mode: Mode) { remove(source.core, forMode: mode) }
}
