import Glibc
import Testing
@testable import LoopRuntime

/// A weak reference that can cross threads in a test.
private final class WeakBox<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
    init(_ value: T) { self.value = value }
}

/// As with Apple's run loops, a loop keeps every source added to it
/// alive until the source is removed or invalidated, or the loop's thread
/// exits, whether or not the caller kept a reference (R9: version-1 sources;
/// the kernel-source wrappers are the ones that needed it, version-0
/// sources, timers and observers are held by the loop directly).
@Suite struct SourceRetentionTests {
    @Test func aPortAddedAndForgottenStillDeliversAndIsFreedWhenRemoved() {
        let outcome = onThread("retain-port") { () -> (delivered: Bool, aliveWhileAdded: Bool, freedOnRemove: Bool) in
            let loop = Loop.current
            let delivered = Counter()
            let weak: WeakBox<LoopPort>
            do {
                let port = LoopPort { _ in delivered.increment() }
                loop.add(port, forMode: .default)
                weak = WeakBox(port)
            }
            let aliveWhileAdded = weak.value != nil
            weak.value?.send(id: 1)
            _ = loop.run(mode: .default, timeout: .milliseconds(100), returnAfterSourceHandled: true)
            if let port = weak.value { loop.remove(port, forMode: .default) }
            return (delivered.count == 1, aliveWhileAdded, weak.value == nil)
        }
        #expect(outcome.aliveWhileAdded, "the loop holds the port it was given")
        #expect(outcome.delivered, "the forgotten port still delivers its message")
        #expect(outcome.freedOnRemove, "removing it from its only mode releases it")
    }

    @Test func aForgottenDescriptorSourceIsFreedWhenItsThreadExits() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let readEnd = fds[0]
        let weak = onThread("retain-fd") { () -> WeakBox<LoopFileDescriptorSource> in
            let source = LoopFileDescriptorSource(fileDescriptor: readEnd, interest: .readable) { _ in }
            Loop.current.add(source, forMode: .common)
            return WeakBox(source)
        }
        // The thread has exited and its loop was torn down: nothing holds the source.
        #expect(eventually { weak.value == nil })
    }

    @Test func invalidatingAForgottenSourceReleasesIt() {
        let worker = LoopThread(name: "retain-signal")
        defer { worker.stop() }
        let boxes = Recorder<WeakBox<LoopSignalSource>>()
        worker.perform(waitUntilDone: true) {
            guard let source = try? LoopSignalSource(signals: [SIGUSR2], { _ in }) else { return }
            worker.loop.add(source, forMode: .common)
            boxes.append(WeakBox(source))
        }
        let box = boxes.all.first
        #expect(box?.value != nil, "added to a running loop, the source lives on")
        worker.perform(waitUntilDone: true) { box?.value?.invalidate() }
        #expect(box != nil && box?.value == nil, "invalidation is the other way a loop lets go")
    }
}
