/// How a `submit` runs its job: every request field of `submit` but the
/// action and its arguments (docs/PROTOCOL.md, "submit"). Unset fields are
/// not sent, so the daemon's defaults apply.
///
/// ```swift
/// var options = SubmitOptions(placement: .key("user-7"), timeoutMs: 5_000)
/// options.durable = true
/// try await client.submit("report", ["7"], options: options)
/// ```
public struct SubmitOptions: Sendable {
    /// Where the job runs: `.any` (the default), `.worker(name)` or `.key(key)`.
    public var placement: Placement
    /// Reply once the job has ended (true, the default), or as soon as it is accepted.
    public var wait: Bool
    /// Start no earlier than this many milliseconds from now (`0...86_400_000`).
    public var delayMs: Int64?
    /// Stop the job once it has run this long (`1...86_400_000`); nil: the action's own.
    public var timeoutMs: Int64?
    /// The worker run mode the job needs; nil: `default`; `"common"`: any.
    public var mode: String?
    /// Journal the job before it is acknowledged.
    public var durable: Bool
    /// Lower starts first among the jobs waiting on its worker; nil: the
    /// daemon's default, 2^31.
    public var priority: UInt32?
    /// End the job `expired` if it has not started this many milliseconds
    /// after its submission; nil: the daemon's `limits.default_expires_in_ms`.
    public var expiresInMs: Int64?
    /// Run the job up to this many more times when an attempt fails or times out.
    public var retries: Int?
    /// The base of the exponential backoff between attempts, in milliseconds.
    public var retryBackoffMs: Int64?
    /// An idempotency key: while a job of this uid with the key is known, a
    /// submit with it returns that job instead of making another.
    public var uniqueKey: String?
    /// `true`: a fleet job, which any node of the daemon's fleet may run
    /// (its id starts `f-`); `false`: a job of this host; nil: the daemon's `fleet.jobs`.
    public var fleet: Bool?
    /// A fleet job only this node may run (with `fleet`).
    public var node: String?
    /// Request fields this version of the client has no property for
    /// (newer daemons' fields), sent as they are after the others.
    public var additionalFields: [(String, JSON)]

    /// Options; with no arguments, the daemon's defaults (any worker, wait).
    public init(placement: Placement = .any, wait: Bool = true, delayMs: Int64? = nil, timeoutMs: Int64? = nil,
                mode: String? = nil, durable: Bool = false, priority: UInt32? = nil, expiresInMs: Int64? = nil,
                retries: Int? = nil, retryBackoffMs: Int64? = nil, uniqueKey: String? = nil,
                fleet: Bool? = nil, node: String? = nil, additionalFields: [(String, JSON)] = []) {
        self.placement = placement
        self.wait = wait
        self.delayMs = delayMs
        self.timeoutMs = timeoutMs
        self.mode = mode
        self.durable = durable
        self.priority = priority
        self.expiresInMs = expiresInMs
        self.retries = retries
        self.retryBackoffMs = retryBackoffMs
        self.uniqueKey = uniqueKey
        self.fleet = fleet
        self.node = node
        self.additionalFields = additionalFields
    }

    /// Accept the job and reply at once, without waiting for it to run.
    public static var noWait: SubmitOptions { SubmitOptions(wait: false) }

    /// The request fields, defaults left out.
    var fields: [(String, JSON)] {
        var f: [(String, JSON)] = []
        switch placement {
        case .any: break
        case .worker(let name): f.append(("worker", .string(name)))
        case .key(let key): f.append(("key", .string(key)))
        }
        if !wait { f.append(("wait", .bool(false))) }
        if let delayMs { f.append(("delay_ms", .integer(delayMs))) }
        if let timeoutMs { f.append(("timeout_ms", .integer(timeoutMs))) }
        if let mode { f.append(("mode", .string(mode))) }
        if durable { f.append(("durable", .bool(true))) }
        if let priority { f.append(("priority", .integer(Int64(priority)))) }
        if let expiresInMs { f.append(("expires_in_ms", .integer(expiresInMs))) }
        if let retries { f.append(("retries", .integer(Int64(retries)))) }
        if let retryBackoffMs { f.append(("retry_backoff_ms", .integer(retryBackoffMs))) }
        if let uniqueKey { f.append(("unique_key", .string(uniqueKey))) }
        if let fleet { f.append(("fleet", .bool(fleet))) }
        if let node { f.append(("node", .string(node))) }
        return f + additionalFields
    }
}
