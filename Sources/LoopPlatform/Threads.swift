import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's kernel id (gettid). The process's first thread has
/// the process id.
@inlinable @inline(__always)
public func currentThreadID() -> pid_t { cloop_gettid() }

/// The process id, which is also the main thread's thread id.
@inlinable @inline(__always)
public func processID() -> pid_t { getpid() }

/// Names the calling thread for the kernel (ps, top, /proc); cut to 15 bytes.
public func setCurrentThreadName(_ name: String) { cloop_set_thread_name(name) }

/// A kernel thread (pthread) running one closure. Joined or detached
/// exactly once by its owner.
///
/// Concurrency: the handle is immutable; `join` and `detach` may be called
/// from any thread, once, in total.
public struct NativeThread: @unchecked Sendable {
    private let handle: pthread_t

    /// Starts a thread running `body`; returns at once.
    public init(_ body: @escaping @Sendable () -> Void) {
        final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        var handle = pthread_t()
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        let r = pthread_create(&handle, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, box)
        precondition(r == 0, "pthread_create failed: \(r)")
        self.handle = handle
    }

    /// Starts a thread named `name` (the kernel keeps 15 bytes of it)
    /// running `body`; returns at once.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        self.init {
            setCurrentThreadName(name)
            body()
        }
    }

    /// Waits for the thread to end.
    public func join() { pthread_join(handle, nil) }

    /// Lets the thread's resources go when it ends, unjoined.
    public func detach() { pthread_detach(handle) }
}

/// Told when a thread whose `ThreadExitSlot` holds it exits.
package protocol ThreadExitObserver: AnyObject {
    /// Runs on the exiting thread, after the slot let go of the object.
    func threadDidExit()
}

/// One object per thread (a pthread key), retained while the thread lives;
/// when the thread exits the slot releases it and calls its `threadDidExit()`.
///
/// Concurrency: `value` and `store` touch only the calling thread's slot.
package final class ThreadExitSlot<Object: ThreadExitObserver>: @unchecked Sendable {
    // Immutable after init.
    @usableFromInline let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        let r = pthread_key_create(&key) { raw in
            guard let raw else { return }
            // The slot stored an `Object`; its type is not known here, only its protocol.
            let object = Unmanaged<AnyObject>.fromOpaque(raw).takeRetainedValue()
            (object as? any ThreadExitObserver)?.threadDidExit()
        }
        precondition(r == 0, "pthread_key_create failed: \(r)")
        self.key = key
    }

    /// The calling thread's object, if one was stored.
    @inlinable @inline(__always)
    package var value: Object? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Stores `object` for the calling thread (retained until it exits).
    /// The thread must not hold one already.
    package func store(_ object: Object) {
        precondition(pthread_getspecific(key) == nil, "the thread's slot is taken")
        pthread_setspecific(key, Unmanaged.passRetained(object as AnyObject).toOpaque())
    }
}
