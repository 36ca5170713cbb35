import Dispatch
import Synchronization
import LoopRuntime
import Testing
@testable import LoopdCore

/// `server.spin_before_sleeping_us` reaches the loops it promises to: the
/// main loop and every worker's, at start, for added workers and on reload.
@Suite("Spin before sleeping (server.spin_before_sleeping_us)")
struct SpinConfigTests {
    @Test("the configured spin is set on the main loop and on every worker's loop; jobs still run")
    func spinReachesEveryLoop() throws {
        let d = RunningDaemon { $0.server.spinBeforeSleepingUs = 50 }
        defer { d.stop() }
        let c = try d.client()
        for k in 0..<20 {
            #expect(c.call(#"{"id":\#(k),"op":"submit","action":"echo","args":["x"]}"#)?.ok == true)
        }
        #expect(d.daemon.spins() == [.microseconds(50), .microseconds(50), .microseconds(50)])
    }

    @Test("off by default: no loop spins")
    func offByDefault() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        #expect(d.daemon.spins() == [.zero, .zero, .zero])
    }

    @Test("a reload changes the spin of every loop, and a worker it adds gets it too")
    func reloadChangesTheSpin() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        var fresh = d.daemon.config
        fresh.server.spinBeforeSleepingUs = 200
        fresh.workers.append(.init(name: "w3"))
        d.daemon.reload(to: fresh)
        #expect(d.daemon.spins() == Array(repeating: .microseconds(200), count: 4))

        fresh.server.spinBeforeSleepingUs = 0
        d.daemon.reload(to: fresh)
        #expect(d.daemon.spins() == Array(repeating: .zero, count: 4))
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"submit","action":"noop","worker":"w3"}"#)?.ok == true)
    }
}

extension Daemon {
    /// Runs `body` on the daemon's main thread (where the server lives) and
    /// waits for it.
    func onMainThread<T: Sendable>(_ body: @escaping @Sendable (Server) -> T) -> T {
        waitUntilReady()
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        loop!.perform(inModes: [.common]) { [server] in
            result.withLock { $0 = body(server!) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Applies `config` as a SIGHUP reload would.
    func reload(to config: DaemonConfig) {
        onMainThread { server in
            // Safe: these configs declare no exec actions, whose containment alone can be refused.
            server.apply(config, actions: try! Daemon.actionTable(config, [:], supervisor: server.execSupervisor))
        }
    }

    /// The spin of the main loop, then of each worker's loop in order.
    func spins() -> [Duration] {
        onMainThread { server in [server.loop.spinBeforeSleeping] + server.workers.map { $0.thread.loop.spinBeforeSleeping } }
    }
}
