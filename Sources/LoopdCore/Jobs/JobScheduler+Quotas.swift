import LoopdProtocol

/// The per-uid quotas (`[quotas]`, docs/OPERATIONS.md, "Sharing loopd
/// between users"): checked before a request takes anything, so a refusal
/// (`quota_exceeded`, naming the key and its value) leaves every job
/// already accepted as it was. Root and loopd's own uid are exempt;
/// administrators are not. Main thread only.
extension JobScheduler {
    /// Whether `uid` is held to the quotas: everyone but root and the
    /// daemon's own uid.
    func isHeldToQuotas(_ uid: UInt32) -> Bool {
        uid != 0 && uid != daemonUID
    }

    /// A new job of `owner` with arguments of `argBytes` (and `durable`):
    /// within `max_jobs`, `max_arg_bytes` and, when durable,
    /// `max_durable_retained_bytes`?
    func checkJobQuotas(uid: UInt32, argBytes: Int, durable: Bool) throws(ProtocolError) {
        guard isHeldToQuotas(uid) else { return }
        let q = config.quotas
        let held = ledger.usage(of: uid)
        if held.jobs >= q.maxJobs {
            throw Self.quotaExceeded(uid: uid, "has \(held.jobs) jobs not ended", key: "max_jobs", q.maxJobs)
        }
        if held.argBytes + argBytes > q.maxArgBytes {
            throw Self.quotaExceeded(uid: uid, "has \(held.argBytes) bytes of arguments in jobs not ended, and this "
                                     + "submit's are \(argBytes)", key: "max_arg_bytes", q.maxArgBytes)
        }
        if durable, let retained = journal?.retainedFinishedBytes(of: uid), retained >= q.maxDurableRetainedBytes {
            throw Self.quotaExceeded(uid: uid, "has \(retained) bytes of finished durable jobs retained",
                                     key: "max_durable_retained_bytes", q.maxDurableRetainedBytes)
        }
    }

    /// One more parked `wait` of `uid`: within `max_waits`?
    func checkWaitQuota(uid: UInt32) throws(ProtocolError) {
        guard isHeldToQuotas(uid) else { return }
        let waits = ledger.usage(of: uid).waits
        if waits >= config.quotas.maxWaits {
            throw Self.quotaExceeded(uid: uid, "has \(waits) wait requests in flight", key: "max_waits",
                                     config.quotas.maxWaits)
        }
    }

    /// One more connection of `uid`: within `max_connections`? The
    /// refusal, if any.
    func connectionQuotaRefusal(uid: UInt32) -> ProtocolError? {
        guard isHeldToQuotas(uid) else { return nil }
        let open = ledger.usage(of: uid).connections
        guard open >= config.quotas.maxConnections else { return nil }
        return Self.quotaExceeded(uid: uid, "has \(open) connections open", key: "max_connections",
                                  config.quotas.maxConnections)
    }

    /// The refusal: who, what they hold, and the quota's key and value.
    static func quotaExceeded(uid: UInt32, _ holding: String, key: String, _ value: Int) -> ProtocolError {
        ProtocolError(.quotaExceeded, "uid \(uid) \(holding): quotas.\(key) is \(value)")
    }
}

extension Job {
    /// What arguments hold on the heap, estimated as `retainedBytes` counts
    /// them: what `quotas.max_arg_bytes` bounds.
    static func argumentBytes(_ args: [String]) -> Int {
        guard !args.isEmpty else { return 0 }
        var n = RetainedBytes.arrayHeader + args.count * MemoryLayout<String>.stride
        for a in args { n += RetainedBytes.of(a) }
        return n
    }
}
