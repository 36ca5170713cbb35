/// The job ids and `jobs` cursors of one run of the daemon, and the way
/// back from them to the submission sequence they name. Immutable.
///
/// An id must not tell one user anything about another's jobs: not whether
/// a job exists, not how many came before. Ids that count (`<start>-<n>`,
/// as loopd wrote them before) let anyone who has one guess the others. So
/// an id is a keyed pseudorandom permutation of the sequence: a 64-bit
/// word, `mark << 48 | sequence`, enciphered under the run's secret key
/// (`JobIDKey`) and written as 13 base-36 digits. Without the key the ids
/// of a run look like independent random numbers; with it, deciphering an
/// id gives its sequence back, so the job table still finds a job of this
/// run by its sequence (no index of ids), and an id still fits the 15
/// bytes a Swift `String` stores inline (`JobIDGenerator`).
///
/// The permutation is the block cipher Speck64/128 (`Speck64`), a 64-bit
/// block under the run's 128-bit key: every id deciphers to exactly one
/// word.
///
/// The top 16 bits mark what the word is: 0 for a job id, 1 for a cursor,
/// so neither can pass for the other. A word made with another run's key
/// (an id replayed from the journal, a cursor from before a restart)
/// deciphers to noise: its mark is right once in 65,536 times, and its
/// sequence then still has to be one this run gave out, which the caller
/// checks against the job it finds. The lower 48 bits hold the sequence:
/// 2.8 * 10^14 jobs, nearly six decades at the 158,000 jobs a second of
/// the pipelined benchmark.
struct JobIDCodec: Sendable {
    /// Digits of an id or a cursor: 36^13 > 2^64, so every word fits.
    static let digits = 13
    /// Bits of the sequence; the mark takes the rest of the word.
    static let sequenceBits = 48
    /// The largest sequence a run can name.
    static let maxSequence: UInt64 = 1 << sequenceBits - 1

    private enum Mark: UInt64 {
        case job = 0
        case cursor = 1
    }

    private let cipher: Speck64

    init(key: JobIDKey) {
        cipher = Speck64(key: key)
    }

    /// The id of the job with `sequence` (1 ... `maxSequence`).
    func id(of sequence: UInt64) -> String { encode(sequence, .job) }

    /// The sequence `id` names, if this run made it; nil for any other
    /// string (an id of another run, or of an older format).
    func sequence(ofID id: String) -> UInt64? { decode(id, .job) }

    /// The `jobs` cursor that continues after the job with `sequence`.
    func cursor(after sequence: UInt64) -> String { encode(sequence, .cursor) }

    /// The sequence a cursor of this run continues after; nil otherwise.
    func sequence(ofCursor cursor: String) -> UInt64? { decode(cursor, .cursor) }

    private func encode(_ sequence: UInt64, _ mark: Mark) -> String {
        precondition(sequence <= Self.maxSequence, "sequence \(sequence) is beyond the \(Self.sequenceBits) bits an id holds")
        var word = cipher.encipher(mark.rawValue << Self.sequenceBits | sequence)
        // The digits, last first, zero-padded to the fixed width: one small
        // string made in place (`String(_:radix:)` costs five times as much).
        return String(unsafeUninitializedCapacity: Self.digits) { digits in
            for i in (0..<Self.digits).reversed() {
                let digit = UInt8(truncatingIfNeeded: word % 36)
                word /= 36
                digits[i] = digit < 10 ? UInt8(ascii: "0") &+ digit : UInt8(ascii: "a") &+ (digit &- 10)
            }
            return Self.digits
        }
    }

    private func decode(_ text: String, _ mark: Mark) -> UInt64? {
        guard text.utf8.count == Self.digits, let word = Self.parse(text) else { return nil }
        let plain = cipher.decipher(word)
        guard plain >> Self.sequenceBits == mark.rawValue else { return nil }
        return plain & Self.maxSequence
    }

    /// The value of 13 lowercase base-36 digits, nil if they are not that or pass 2^64 - 1.
    private static func parse(_ text: String) -> UInt64? {
        var n: UInt64 = 0
        for c in text.utf8 {
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = c - UInt8(ascii: "a") + 10
            default: return nil
            }
            let (times, o1) = n.multipliedReportingOverflow(by: 36)
            let (sum, o2) = times.addingReportingOverflow(UInt64(digit))
            guard !o1 && !o2 else { return nil }
            n = sum
        }
        return n
    }
}
