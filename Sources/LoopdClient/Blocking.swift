import NIOCore
import NIOPosix

extension LoopdClient {
    /// The client for synchronous code (command-line tools): every operation
    /// blocks the calling thread until its reply. Do not use it from an
    /// event loop or from inside a Swift concurrency task (it would block a
    /// thread those need); from async code use `LoopdClient` itself.
    ///
    /// ```swift
    /// let client = try LoopdClient.Blocking(socketPath: "loopd.sock")
    /// print(try client.submit("echo", ["hi"]).output ?? "")
    /// ```
    public final class Blocking: Sendable {
        /// The async client underneath (share it with async code freely).
        public let client: LoopdClient

        /// Connects to the daemon at `socketPath`.
        public init(socketPath: String, configuration: Configuration = Configuration(),
                    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
            let client = LoopdClient(socketPath: socketPath, configuration: configuration,
                                     eventLoopGroup: eventLoopGroup)
            self.client = client
            try Self.run(client) { try await $0.connect() }
        }

        /// Wraps an async client.
        public init(_ client: LoopdClient) { self.client = client }

        private static func run<T: Sendable>(_ client: LoopdClient,
                                             _ body: @escaping @Sendable (LoopdClient) async throws -> T) throws -> T {
            let promise = client.eventLoop.makePromise(of: T.self)
            promise.completeWithTask {
                try await withTaskExecutorPreference(client.taskExecutor) { try await body(client) }
            }
            return try promise.futureResult.wait()
        }

        private func run<T: Sendable>(_ body: @escaping @Sendable (LoopdClient) async throws -> T) throws -> T {
            try Self.run(client, body)
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
    }
}
