/// Job ids: `<start>-<n>`, the daemon's start time in Unix milliseconds and
/// a per-start counter, both in base 36. Unique for a state directory as
/// long as no two starts share a millisecond; opaque to clients.
///
/// Both parts are base 36 so an id stays within 15 UTF-8 bytes, the size
/// Swift stores inline in a `String`, for the first 36^6 (2.1 billion) jobs
/// of a start (until 2059, when the start time needs a ninth digit). A
/// decimal counter passed 15 bytes at the millionth job, and from then on
/// every id was a heap allocation of its own, kept by the retained-job
/// window and the journal (bug job-ids-outgrow-inline-strings, found by
/// the 10-minute soak: +8 MB of RSS once a million jobs had run).
///
/// Main thread only (a mutating counter).
struct JobIDGenerator {
    /// What every id of this run starts with.
    let runPrefix: String
    private var counter: UInt64 = 0

    init(startedAtUnixMs: Int64) {
        runPrefix = String(UInt64(max(0, startedAtUnixMs)), radix: 36) + "-"
    }

    /// Jobs accepted so far in this run: the last sequence given out.
    var accepted: UInt64 { counter }

    /// The next job's submission sequence and its id (`id`, when the job
    /// has one already: a replayed durable job keeps its id, and takes a
    /// sequence whose id then goes unused).
    mutating func next(keeping id: String? = nil) -> (sequence: UInt64, id: String) {
        counter += 1
        return (counter, id ?? runPrefix + String(counter, radix: 36))
    }
}
