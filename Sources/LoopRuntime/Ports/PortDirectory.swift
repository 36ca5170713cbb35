import LoopPlatform

/// Port names, and the ports of this process by name.
///
/// The machine-wide registry is the kernel's: a local port binds a Unix
/// datagram socket to the abstract address `"\0loopd.port.<name>"`, so the
/// name is visible to every process in the network namespace, leaves no
/// filesystem node, and is freed when the socket closes (even if its process
/// dies). This table only remembers which of those ports live in this
/// process, so `sendRequest` can refuse to wait on its own thread's loop.
final class PortDirectory: @unchecked Sendable {
    static let shared = PortDirectory()

    /// What every port's abstract address starts with.
    static let prefix = Array("loopd.port.".utf8)

    private let lock = Lock()
    private var ports: [String: WeakOwner<LoopMessagePort>] = [:]  // guarded by lock

    /// The abstract address for `name`, or `.invalidName`.
    static func address(for name: String) throws(LoopPortError) -> UnixAddress {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= LoopMessagePort.maximumNameLength, !bytes.contains(0) else {
            throw .invalidName
        }
        return UnixAddress(abstract: prefix + bytes)
    }

    func register(_ port: LoopMessagePort) {
        let entry = WeakOwner<LoopMessagePort>()
        entry.value = port
        lock.withLock { ports[port.name] = entry }
    }

    /// Forgets `port`, unless the name already belongs to a newer port.
    func unregister(_ port: LoopMessagePort) {
        lock.withLock {
            if let entry = ports[port.name], entry.value == nil || entry.value === port { ports[port.name] = nil }
        }
    }

    /// The live port of this process registered under `name`, if any.
    func localPort(named name: String) -> LoopMessagePort? {
        lock.withLock { ports[name]?.value }
    }
}
