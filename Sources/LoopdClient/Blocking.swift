import NIOCore
import NIOPosix

extension LoopdClient {
    /// The client for synchronous code (command-line tools): every operation
    /// blocks the calling thread until its reply. Do not use it from an
    /// event loop or from inside a Swift concurrency task (it would block a
    /// thread those need); from async code use `LoopdClient` itself.
    ///
    /// ```swift
    /// let client = try LoopdClient.Blocking(socketPath: LoopdClient.defaultSocketPath)
    /// print(try client.submit("echo", ["hi"]).output ?? "")
    /// ```
    ///
    /// Each call runs as a task on the client's event loop while the
    /// calling thread waits: no thread is started per call.
    public final class Blocking: Sendable {
        /// The async client underneath (share it with async code freely).
        public let client: LoopdClient
        /// How long each call waits for its reply: past it, the call throws
        /// `LoopdError` with code `replyTimedOut`, and the reply, if it
        /// comes later, is dropped. Nil (the default): as long as it takes,
        /// which for a waited `submit` is as long as the job runs.
        public let replyTimeout: Duration?

        /// Connects to the daemon at `socketPath`.
        ///
        /// - Parameters:
        ///   - socketPath: the daemon's Unix socket.
        ///   - configuration: how the client behaves.
        ///   - eventLoopGroup: where the client's I/O runs; by default NIO's
        ///     shared singleton group. A tool that wants one thread and no
        ///     more passes a group of one thread.
        ///   - replyTimeout: how long each call waits for its reply; nil: no limit.
        public init(socketPath: String, configuration: Configuration = Configuration(),
                    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                    replyTimeout: Duration? = nil) throws {
            client = LoopdClient(socketPath: socketPath, configuration: configuration, eventLoopGroup: eventLoopGroup)
            self.replyTimeout = replyTimeout
            try run { try await $0.connect() }
        }

        /// Wraps an async client; each call waits at most `replyTimeout` for its reply.
        public init(_ client: LoopdClient, replyTimeout: Duration? = nil) {
            self.client = client
            self.replyTimeout = replyTimeout
        }

        /// A request sent with `start(op:_:)` whose reply is collected with `reply(to:)`.
        public struct Pending: Sendable {
            /// The request's id on the wire: its reply echoes it.
            public let id: Int64
            fileprivate let call: Call<RawReply>
        }

        /// Sends a request of operation `op` with `fields` and returns
        /// without waiting for its reply, so that several requests are on
        /// the wire at once; `reply(to:)` collects each reply, in any order.
        /// Each request gets the next id of the client's own.
        ///
        /// ```swift
        /// let client = try LoopdClient.Blocking(socketPath: "./loopd.sock")
        /// let slow = client.start(op: "submit", [("action", "sleep"), ("args", ["200"])])
        /// let quick = client.start(op: "ping")
        /// print(try client.reply(to: quick).ok)   // true, while the sleep still runs
        /// print(try client.reply(to: slow).ok)    // true
        /// ```
        public func start(op: String, _ fields: [(String, JSON)] = []) -> Pending {
            let id = client.nextRequestID()
            return Pending(id: id, call: start { try await $0.send(id: id, op: op, fields) })
        }

        /// Waits for the reply to a request `start(op:_:)` sent, and returns
        /// it as `send(op:_:)` does. Past `replyTimeout` it throws
        /// `replyTimedOut` and gives up on the request.
        public func reply(to pending: Pending) throws -> RawReply { try wait(for: pending.call) }

        /// One call in progress: its task, on the client's event loop, and
        /// the future the task completes with the call's result.
        fileprivate struct Call<T: Sendable>: Sendable {
            let task: Task<Void, Never>
            let result: EventLoopFuture<T>
        }

        /// Starts `body` as a task on the client's event loop: the task's
        /// requests and their replies cost no hop between threads.
        private func start<T: Sendable>(_ body: @escaping @Sendable (LoopdClient) async throws -> T) -> Call<T> {
            let client = self.client
            let promise = client.eventLoop.makePromise(of: T.self)
            let task = Task(executorPreference: client.taskExecutor) {
                do {
                    promise.succeed(try await body(client))
                } catch {
                    promise.fail(error)
                }
            }
            return Call(task: task, result: promise.futureResult)
        }

        /// Blocks until `call` ends, or cancels it when `replyTimeout` passes first.
        private func wait<T: Sendable>(for call: Call<T>) throws -> T {
            guard let replyTimeout else { return try call.result.wait() }
            let timer = client.eventLoop.scheduleTask(in: TimeAmount(replyTimeout)) { call.task.cancel() }
            defer { timer.cancel() }
            do {
                return try call.result.wait()
            } catch is CancellationError {
                // Nothing else cancels the task: only the timer can have.
                throw LoopdError(.replyTimedOut, "no reply from the daemon within \(replyTimeout)")
            }
        }

        private func run<T: Sendable>(_ body: @escaping @Sendable (LoopdClient) async throws -> T) throws -> T {
            try wait(for: start(body))
        }

        /// See `LoopdClient.ping()`.
        public func ping() throws -> Pong { try run { try await $0.ping() } }
        /// See `LoopdClient.submit(_:_:options:)`.
        @discardableResult
        public func submit(_ action: String, _ args: [String] = [], options: SubmitOptions = SubmitOptions()) throws -> JobOutcome {
            try run { try await $0.submit(action, args, options: options) }
        }
        /// See `LoopdClient.wait(job:timeoutMs:)`.
        public func wait(job: String, timeoutMs: Int64? = nil) throws -> JobOutcome {
            try run { try await $0.wait(job: job, timeoutMs: timeoutMs) }
        }
        /// See `LoopdClient.status(job:)`.
        public func status(job: String) throws -> JobStatus { try run { try await $0.status(job: job) } }
        /// See `LoopdClient.cancel(job:)`.
        @discardableResult
        public func cancel(job: String) throws -> CancelOutcome { try run { try await $0.cancel(job: job) } }
        /// See `LoopdClient.jobs(_:)`.
        public func jobs(_ query: JobsQuery = JobsQuery()) throws -> JobsPage { try run { try await $0.jobs(query) } }
        /// Every job `query` matches, all pages fetched (see `LoopdClient.allJobs(_:)`).
        public func allJobs(_ query: JobsQuery = JobsQuery()) throws -> [JobStatus] {
            try run { client in
                var all: [JobStatus] = []
                for try await job in client.allJobs(query) { all.append(job) }
                return all
            }
        }
        /// See `LoopdClient.workers()`.
        public func workers() throws -> [WorkerInfo] { try run { try await $0.workers() } }
        /// See `LoopdClient.inspect(worker:)`.
        public func inspect(worker: String) throws -> String { try run { try await $0.inspect(worker: worker) } }
        /// See `LoopdClient.mode(worker:mode:)`.
        @discardableResult
        public func mode(worker: String, mode: String) throws -> ModeChange {
            try run { try await $0.mode(worker: worker, mode: mode) }
        }
        /// See `LoopdClient.retry(job:)`.
        public func retry(job: String) throws -> String { try run { try await $0.retry(job: job) } }
        /// See `LoopdClient.retry(_:)`.
        public func retry(_ query: JobsQuery) throws -> RetryOutcome { try run { try await $0.retry(query) } }
        /// See `LoopdClient.discard(job:)`.
        public func discard(job: String) throws { try run { try await $0.discard(job: job) } }
        /// See `LoopdClient.discard(_:)`.
        public func discard(_ query: JobsQuery) throws -> (jobs: [String], more: Bool) { try run { try await $0.discard(query) } }
        /// See `LoopdClient.schedules()`.
        public func schedules() throws -> [ScheduleInfo] { try run { try await $0.schedules() } }
        /// See `LoopdClient.schedule(_:_:)`.
        @discardableResult
        public func schedule(_ command: ScheduleCommand, _ name: String) throws -> ScheduleChange {
            try run { try await $0.schedule(command, name) }
        }
        /// See `LoopdClient.stats()`.
        public func stats() throws -> DaemonStats { try run { try await $0.stats() } }
        /// See `LoopdClient.metrics()`.
        public func metrics() throws -> MetricsText { try run { try await $0.metrics() } }
        /// See `LoopdClient.send(op:_:)`.
        public func send(op: String, _ fields: [(String, JSON)] = []) throws -> RawReply {
            try run { try await $0.send(op: op, fields) }
        }
        /// See `LoopdClient.reconnect()`.
        public func reconnect() throws { try run { try await $0.reconnect() } }
        /// See `LoopdClient.close()`.
        public func close() throws { try run { await $0.close() } }
        /// Starts closing the connection and returns without waiting for
        /// the close: for a tool that exits next, which then spends no
        /// wake-up of its thread on it. As with `close()`, requests in
        /// flight fail with `connectionClosed`.
        public func closeWithoutWaiting() { _ = start { await $0.close() } }
    }
}
