import Foundation
import Testing
@testable import LoopRuntime

/// A default actor: with a task executor preference, its jobs run on the
/// preferred executor (SE-0417).
private actor Tally {
    private var value = 0
    func add() -> Int {
        value += 1
        return value
    }
}

/// A `LoopThread`, `Loop.taskExecutor` and `LoopTaskExecutor` as Swift task
/// executors: a task's jobs are blocks of the loop's passes (R17 steps 4
/// and 10, R23), wait while the loop does not run their modes (R2, R24), and
/// the runtime keeps the task on the loop across awaits and nested
/// preferences. `Loop.main` needs a main thread that runs it, so its test
/// runs MainQueueProbe (scenario "taskexecutor") in a process of its own.
@Suite struct TaskExecutorTests {
    @Test func R23_aTaskPreferringALoopThreadRunsOnIt() async {
        let worker = LoopThread(name: "te-run")
        defer { shutDown(worker) }
        let onThread = await Task(executorPreference: worker) { worker.loop.isCurrentThread }.value
        #expect(onThread)
        let detached = await Task.detached(executorPreference: worker) { worker.loop.isCurrentThread }.value
        #expect(detached)
    }

    @Test func R23_awaitsInsideTheTaskComeBackToTheLoopThread() async throws {
        let worker = LoopThread(name: "te-await")
        defer { shutDown(worker) }
        let tally = Tally()
        let seen = try await Task(executorPreference: worker) { () throws -> [Bool] in
            var seen: [Bool] = [worker.loop.isCurrentThread]
            await Task.yield()
            seen.append(worker.loop.isCurrentThread)
            try await Task.sleep(for: .milliseconds(1))
            seen.append(worker.loop.isCurrentThread)
            _ = await Task.detached { 1 }.value  // runs elsewhere
            seen.append(worker.loop.isCurrentThread)
            _ = await tally.add()                // a default actor: hops and comes back
            seen.append(worker.loop.isCurrentThread)
            let two: Int = try await worker.perform { 2 }  // the async perform, on the same loop
            seen.append(two == 2)
            seen.append(worker.loop.isCurrentThread)
            return seen
        }.value
        #expect(seen == Array(repeating: true, count: 7))
    }

    @Test func R23_nestedPreferencesAndChildTasksStayOnTheLoop() async {
        let worker = LoopThread(name: "te-nested")
        defer { shutDown(worker) }
        let loop = worker.loop
        // From a task with no preference: the closure runs on the loop.
        let outer = await withTaskExecutorPreference(worker) { loop.isCurrentThread }
        #expect(outer)
        let seen = await Task(executorPreference: worker) { () -> [Bool] in
            var seen: [Bool] = []
            await withTaskExecutorPreference(worker) {
                seen.append(loop.isCurrentThread)
                await withTaskExecutorPreference(worker) {
                    await Task.yield()
                    seen.append(loop.isCurrentThread)
                }
                seen.append(loop.isCurrentThread)
            }
            // A child task inherits the preference.
            async let child = loop.isCurrentThread
            seen.append(await child)
            let group = await withTaskGroup(of: Bool.self) { group -> [Bool] in
                for _ in 0..<4 { group.addTask { loop.isCurrentThread } }
                var all: [Bool] = []
                for await x in group { all.append(x) }
                return all
            }
            seen += group
            seen.append(loop.isCurrentThread)
            return seen
        }.value
        #expect(seen == Array(repeating: true, count: 9))
    }

    @Test func R23_anActorPinnedToTheThreadIsEnteredFromATaskPreferringIt() async {
        let worker = LoopThread(name: "te-actor")
        defer { shutDown(worker) }
        let counter = PinnedCounter(thread: worker)
        let results = await Task(executorPreference: worker) { () -> [Bool] in
            var results: [Bool] = []
            for _ in 0..<3 {
                let (_, onThread) = await counter.increment()
                results.append(onThread && worker.loop.isCurrentThread)
            }
            return results
        }.value
        #expect(results == [true, true, true])
    }

    @Test func R23_theLoopsTaskExecutorIsOneInstanceWhileHeld() async {
        let worker = LoopThread(name: "te-identity")
        defer { shutDown(worker) }
        let executor = worker.loop.taskExecutor
        #expect(executor === worker.loop.taskExecutor)
        #expect(executor.modes == nil)
        #expect(Loop.main.taskExecutor === Loop.main.taskExecutor)
        let seen = await Task(executorPreference: executor) { () -> [Bool] in
            var seen = [worker.loop.isCurrentThread]
            await withTaskExecutorPreference(worker.loop.taskExecutor) {
                await Task.yield()
                seen.append(worker.loop.isCurrentThread)
            }
            return seen
        }.value
        #expect(seen == [true, true])
    }

    /// One pass (R17): step 4 runs the blocks queued before it (the task's
    /// first job among them, in queue order), fires the ready version-0
    /// source, whose handler resumes the task, then runs blocks again (the
    /// task's next job); a task made by a timer's handler (step 9) runs in
    /// step 10's blocks. Every job here is queued synchronously from the
    /// loop's thread or before the run (`Task.yield()` would hop through the
    /// global executor and land a pass later or sooner).
    @Test func R17_aTasksJobsAreBlocksOfThePassInOrderWithSourcesAndTimers() {
        let log = onThread("te-pass") { () -> [String] in
            let loop = Loop.current
            let log = Recorder<String>()
            let executor = loop.taskExecutor
            let observer = activityLogger(log, [.beforeSources, .beforeWaiting, .afterWaiting])
            loop.add(observer, forMode: .default)
            let gate = Slot<CheckedContinuation<Void, Never>>()
            let source = LoopSource {
                log.append("source")
                gate.value?.resume()
            }
            loop.add(source, forMode: .default)
            let timer = LoopTimer(after: .zero) { _ in
                log.append("timer")
                Task(executorPreference: executor) {
                    log.append("task from timer")
                    loop.stop()
                }
            }
            Task(executorPreference: executor) {
                log.append("task 1")
                await withCheckedContinuation { gate.set($0) }
                log.append("task 2")
            }
            loop.perform { log.append("block") }
            source.signal()
            loop.add(timer, forMode: .default)
            let result = boundedRun(loop)
            observer.invalidate()
            source.invalidate()
            return log.all + ["\(result)"]
        }
        #expect(log == [
            "beforeSources", "task 1", "block", "source", "task 2",
            "timer", "task from timer", "stopped",
        ])
    }

    @Test func R2_aTaskWaitsWhileItsLoopsThreadIsNotRunningIt() async {
        let loopSlot = Slot<Loop>()
        let go = Flag()
        let thread = TestThread("te-idle") { () -> String in
            let loop = Loop.current
            loopSlot.set(loop)
            guard go.wait(30) else { return "never released" }
            let keep = keepAlive()
            loop.add(keep, forMode: .default)
            defer { keep.invalidate() }
            return "\(loop.run(mode: .default, timeout: .seconds(30)))"
        }
        guard let loop = loopSlot.wait() else {
            Issue.record("the thread did not start")
            return
        }
        let ran = Flag()
        let task = Task(executorPreference: loop.taskExecutor) { () -> Bool in
            ran.open()
            loop.stop()
            return loop.isCurrentThread
        }
        // The only thread that may run the job is parked outside its loop.
        #expect(!ran.isOpen)
        go.open()
        #expect(await task.value)
        #expect(thread.join() == "stopped")
    }

    @Test func R24_aTaskWaitsWhileTheLoopRunsAModeOutsideTheCommonSet() async {
        let worker = LoopThread(name: "te-mode", mode: "te.private")
        defer { shutDown(worker) }
        let ran = Flag()
        let task = Task(executorPreference: worker) { () -> Loop.Mode? in
            ran.open()
            return worker.loop.currentMode
        }
        // A pass of the private mode ran after the job was queued; the job held.
        #expect(roundTrip(worker, modes: ["te.private"]))
        #expect(!ran.isOpen)
        worker.setRunMode(.default)
        #expect(await task.value == .default)
    }

    @Test func R24_anExecutorForChosenModesRunsJobsOnlyInThem() async {
        let worker = LoopThread(name: "te-modes")
        defer { shutDown(worker) }
        let executor = LoopTaskExecutor(loop: worker.loop, modes: ["te.tracking"])
        let ran = Flag()
        let task = Task(executorPreference: executor) { () -> Loop.Mode? in
            ran.open()
            return worker.loop.currentMode
        }
        #expect(roundTrip(worker))
        #expect(!ran.isOpen)
        worker.setRunMode("te.tracking")
        #expect(await task.value == "te.tracking")
    }
}

extension TaskExecutorTests {
    @Test func R2_mainLoopTaskExecutorWaitsForTheMainThreadToRunItsLoop() throws {
        let lines = try runProgram("MainQueueProbe", ["taskexecutor"])
        #expect(lines == [
            "ran before the run = false", "run returned stopped",
            "task on main = true", "after awaits on main = true",
        ])
    }
}
