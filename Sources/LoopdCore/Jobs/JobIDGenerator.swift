/// Hands out submission sequences and the ids of this run (`JobIDCodec`:
/// 13 base-36 digits that only the run's key turns back into the
/// sequence). Opaque to clients.
///
/// An id stays within 15 UTF-8 bytes, the size Swift stores inline in a
/// `String`: a decimal counter once passed 15 bytes at the millionth job,
/// and from then on every id was a heap allocation of its own, kept by the
/// retained-job window and the journal (bug job-ids-outgrow-inline-strings,
/// found by the 10-minute soak: +8 MB of RSS once a million jobs had run).
///
/// Unique across restarts: ids of one run are distinct (a permutation),
/// and a new id that happens to equal one an earlier run made which the
/// daemon still answers for (a replayed durable job, a retained end) is
/// passed over for the next sequence's. The chance of one is n * m / 2^64
/// for n new ids and m remembered ones: for a million of each, one in 18
/// million.
///
/// Main thread only (a mutating counter).
struct JobIDGenerator {
    /// Turns this run's ids and cursors into sequences and back.
    let codec: JobIDCodec
    private var counter: UInt64 = 0
    /// Sequences whose id was taken already, and so went to no job.
    private var passedOver: UInt64 = 0

    init(key: JobIDKey) {
        codec = JobIDCodec(key: key)
    }

    /// Jobs accepted so far in this run (replayed ones included).
    var accepted: UInt64 { counter - passedOver }

    /// The last sequence given out (0: none yet).
    var lastSequence: UInt64 { counter }

    /// The next job's submission sequence and its id: `id`, when the job
    /// has one already (a replayed durable job keeps its id, and takes a
    /// sequence whose own id then goes unused); else this run's id for the
    /// sequence, passing over any sequence whose id `isTaken`.
    mutating func next(keeping id: String? = nil, isTaken: (String) -> Bool = { _ in false })
        -> (sequence: UInt64, id: String) {
        while true {
            counter += 1
            precondition(counter <= JobIDCodec.maxSequence, "a run of loopd cannot accept more than 2^48 jobs")
            if let id { return (counter, id) }
            let made = codec.id(of: counter)
            if !isTaken(made) { return (counter, made) }
            passedOver += 1
        }
    }
}
