import Glibc
import Testing
@testable import LoopRuntime

/// A connected, non-blocking socket pair standing in for a pipe.
private func makePipe(_ fds: inout [Int32]) -> Bool {
    socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0
}

/// The version-1 sources the daemon needs.
@Suite struct KernelSourceTests {
    @Test func fileDescriptorSourceReportsReadabilityAndWakesTheLoop() throws {
        var fds: [Int32] = [0, 0]
        #expect(makePipe(&fds))
        defer { close(fds[0]); close(fds[1]) }
        let worker = LoopThread(name: "fd-source")
        defer { worker.stop() }
        let got = Recorder<[UInt8]>()
        let readEnd = fds[0]
        let source = LoopFileDescriptorSource(fileDescriptor: readEnd, interest: .readable) { readiness in
            guard readiness.readable else { return }
            var buf = [UInt8](repeating: 0, count: 64)
            let n = read(readEnd, &buf, 64)
            if n > 0 { got.append(Array(buf[0..<n])) }
        }
        worker.loop.add(source, forMode: .common)
        #expect(eventually { worker.loop.isWaiting })
        #expect(write(fds[1], "hi", 2) == 2)
        #expect(eventually { got.all.flatMap { $0 } == Array("hi".utf8) })
        source.invalidate()
    }

    @Test func fileDescriptorSourceWithoutInterestStaysQuietUntilInterestReturns() throws {
        var fds: [Int32] = [0, 0]
        #expect(makePipe(&fds))
        defer { close(fds[0]); close(fds[1]) }
        let worker = LoopThread(name: "fd-interest")
        defer { worker.stop() }
        let calls = Counter()
        let source = LoopFileDescriptorSource(fileDescriptor: fds[1], interest: []) { r in
            if r.writable { calls.increment() }
        }
        worker.loop.add(source, forMode: .common)
        // A socket with room to write is writable at once; with no interest nothing fires.
        worker.perform(waitUntilDone: true) {}
        worker.perform(waitUntilDone: true) {}
        #expect(calls.count == 0)
        source.interest = .writable
        #expect(eventually { calls.count > 0 })
        source.interest = []
        source.invalidate()
    }

    @Test func signalSourceDeliversOnTheLoopThread() throws {
        let worker = LoopThread(name: "signals")
        defer { worker.stop() }
        let got = Recorder<Int32>()
        let box = Recorder<pthread_t>()
        let holder = Recorder<LoopSignalSource>()
        worker.perform(waitUntilDone: true) {
            LoopSignalSource.block([SIGUSR2])
            let source = try! LoopSignalSource(signals: [SIGUSR2]) { got.append($0) }
            Loop.current.add(source, forMode: .common)
            holder.append(source)
            box.append(pthread_self())
        }
        #expect(pthread_kill(box.all[0], SIGUSR2) == 0)
        #expect(eventually { got.all == [SIGUSR2] })
        holder.all[0].invalidate()
    }

    private func spawn(_ argv: [String]) -> pid_t {
        var pid: pid_t = 0
        var cargs = argv.map { strdup($0) }
        cargs.append(nil)
        defer { for p in cargs { free(p) } }
        // Children inherit the signal mask: start them with none blocked.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK))
        let r = posix_spawn(&pid, argv[0], nil, &attr, cargs, environ)
        precondition(r == 0, "posix_spawn failed: \(r)")
        return pid
    }

    @Test func processSourceReportsExitStatus() throws {
        let worker = LoopThread(name: "child-exit")
        defer { worker.stop() }
        let exits = Recorder<ProcessExit>()
        let pid = spawn(["/bin/sh", "-c", "exit 3"])
        let source = try LoopProcessSource(pid: pid) { exits.append($0) }
        worker.loop.add(source, forMode: .common)
        #expect(eventually { exits.all == [.exited(3)] })
        #expect(!source.isValid)  // reaped and spent
    }

    @Test func processSourceSeesAKillThroughThePidfd() throws {
        let worker = LoopThread(name: "child-kill")
        defer { worker.stop() }
        let exits = Recorder<ProcessExit>()
        let pid = spawn(["/bin/sleep", "600"])
        let source = try LoopProcessSource(pid: pid) { exits.append($0) }
        worker.loop.add(source, forMode: .common)
        let failures = Recorder<String>()
        worker.perform(waitUntilDone: true) {
            do { try source.send(signal: SIGTERM) } catch { failures.append("\(error)") }
        }
        #expect(failures.all.isEmpty)
        #expect(eventually { exits.all == [.signalled(SIGTERM)] })
    }
}
