/// The hard bounds of `submit`'s retry and unique-key fields. The daemon's
/// configuration narrows them (`limits.max_retries`,
/// `limits.max_retry_backoff_ms`, `limits.max_unique_key_bytes`).
extension RequestLimits {
    /// `retries` beyond this are refused whatever the configuration says.
    public static let maxRetries = 1000
    /// The longest `retry_backoff_ms` base: one day.
    public static let maxRetryBackoffMs: Int64 = 86_400_000
    /// The base of the backoff when a submit gives `retries` but no `retry_backoff_ms`.
    public static let defaultRetryBackoffMs: Int64 = 1000
    /// A `unique_key` longer than this is refused whatever the configuration says.
    public static let maxUniqueKeyBytes = 4096
}

extension RequestDecoder {
    /// `retries`, `retry_backoff_ms` and `unique_key` of a `submit`.
    static func retryFields(_ f: inout RequestFields, into s: inout SubmitRequest) throws(ProtocolError) {
        if let n = try f.optionalInteger("retries", in: 0...Int64(RequestLimits.maxRetries)) { s.retries = Int(n) }
        if let ms = try f.optionalInteger("retry_backoff_ms", in: 0...RequestLimits.maxRetryBackoffMs) {
            s.retryBackoffMs = ms
        }
        if let key = try f.optionalString("unique_key") {
            guard !key.isEmpty, key.utf8.count <= RequestLimits.maxUniqueKeyBytes, !key.utf8.contains(0) else {
                throw ProtocolError(.badRequest, "\"unique_key\" must be 1 to \(RequestLimits.maxUniqueKeyBytes) bytes without NUL")
            }
            s.uniqueKey = key
        }
    }
}
