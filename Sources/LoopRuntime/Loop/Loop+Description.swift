
extension Loop: CustomStringConvertible {
    /// How much a description of the loop tells (`describe(_:)`).
    public enum DescriptionDetail: Sendable {
        /// Everything: the heap address of the loop and of each item, and
        /// each kernel source's label (its descriptor, a child's pid).
        case full
        /// The same dump without what could point at the work the items
        /// belong to: no addresses (items are told apart by their place in
        /// each list) and no kernel source labels. For an audience that may
        /// see the loop's shape but not whose work runs in it.
        case anonymous
    }

    /// The loop's state in the shape of Core Foundation's run-loop dump,
    /// in full (`describe(.full)`).
    public var description: String { describe(.full) }

    /// The loop's state in the shape of Core Foundation's run-loop dump:
    /// current mode, common modes, common-mode items, then per mode its
    /// sources, timers (next fire date) and observers (activities, order);
    /// with addresses and labels as `detail` says.
    public func describe(_ detail: DescriptionDetail) -> String {
        let onLoopThread = isCurrentThread
        let full = detail == .full
        func name(_ kind: String, _ object: AnyObject) -> String { full ? "<\(kind) \(hexAddress(object))>" : "<\(kind)>" }
        func describe(_ s: LoopSource) -> String {
            "\(name("LoopSource", s)) {signalled = \(s.isSignalled ? "Yes" : "No"), valid = \(s.isValid ? "Yes" : "No"), order = \(s.order), version = 0}"
        }
        func describe(_ k: KernelSource) -> String {
            "\(name("LoopSource", k)) {valid = \(k.isValid ? "Yes" : "No"), order = \(k.order), version = 1\(full ? ", \(k.label())" : "")}"
        }
        func describe(_ t: LoopTimer) -> String {
            let interval = t.interval.map { "\($0)" } ?? "one-shot"
            return "\(name("LoopTimer", t)) {valid = \(t.isValid ? "Yes" : "No"), interval = \(interval), tolerance = \(t.tolerance), next fire date = \(t.fireDate?.description ?? "none")}"
        }
        func describe(_ o: LoopObserver) -> String {
            "\(name("LoopObserver", o)) {valid = \(o.isValid ? "Yes" : "No"), activities = 0x\(String(o.activities.rawValue, radix: 16)) (\(o.activities)), repeats = \(o.repeats ? "Yes" : "No"), order = \(o.order)}"
        }
        return lock.withLock {
            var out = "\(name("Loop", self)) {thread = \(threadID)\(isMain ? " (main)" : ""), "
            out += "wakeUps = \(wakeUpCount), isWaiting = \(isWaiting)\n"
            out += "current mode = \(runningMode?.rawValue ?? "(none)"),\n"
            out += "common modes = {\n"
            for (i, m) in commonModes.enumerated() { out += "\t\(i) : \(m.rawValue)\n" }
            out += "},\n"
            out += "common mode items = {\n"
            var index = 0
            for s in common.sources { out += "\t\(index) : \(describe(s))\n"; index += 1 }
            for k in common.kernelSources { out += "\t\(index) : \(describe(k))\n"; index += 1 }
            for t in common.timers { out += "\t\(index) : \(describe(t))\n"; index += 1 }
            for o in common.observers { out += "\t\(index) : \(describe(o))\n"; index += 1 }
            out += "},\n"
            out += "modes = {\n"
            for mode in modes.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                let items = modes[mode]!
                out += "\t<LoopMode> {name = \(mode.rawValue), "
                let isCommon = commonModes.contains(mode)
                // On the loop's own thread, blocks a pass has taken but not run yet count too.
                let taken = onLoopThread ? carriedBlocks.admittedCount(mode: mode, modeIsCommon: isCommon) : 0
                let pending = taken + inbox.withLock { $0.blocks.admittedCount(mode: mode, modeIsCommon: isCommon) }
                out += "blocks pending = \(pending)\n"
                out += "\tsources0 = {\n"
                for (i, s) in items.sources.enumerated() { out += "\t\t\(i) : \(describe(s))\n" }
                out += "\t},\n\tsources1 = {\n"
                for (i, k) in items.kernelSources.enumerated() { out += "\t\t\(i) : \(describe(k))\n" }
                out += "\t},\n\ttimers = {\n"
                let timers = items.timers.values.sorted { ($0.fireDate ?? .distantFuture, $0.sequence) < ($1.fireDate ?? .distantFuture, $1.sequence) }
                for (i, t) in timers.enumerated() { out += "\t\t\(i) : \(describe(t))\n" }
                out += "\t},\n\tobservers = {\n"
                for (i, o) in items.observers.enumerated() { out += "\t\t\(i) : \(describe(o))\n" }
                out += "\t},\n\t},\n"
            }
            out += "}}"
            return out
        }
    }
}

private func hexAddress(_ object: AnyObject) -> String {
    "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), radix: 16)
}
