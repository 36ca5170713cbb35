import LoopPlatform

/// The secret of one run of the daemon that its job ids are made with
/// (`JobIDCodec`): 128 bits from the kernel's generator, drawn at every
/// start, never written anywhere. Immutable.
///
/// Its one use is as a keyed pseudorandom function, SipHash-2-4 (Aumasson
/// and Bernstein, 2012) of one 64-bit word. SipHash is the PRF Swift's own
/// `Hasher` runs, but `Hasher` takes its key from the process's seed, which
/// `SWIFT_DETERMINISTIC_HASHING` fixes, and offers no way to give it one;
/// so the key is ours (`RandomBytes`) and the function written out here.
/// Its output is indistinguishable from random to whoever lacks the key,
/// which is what makes the ids built on it unguessable.
struct JobIDKey: Sendable, Equatable {
    let k0: UInt64
    let k1: UInt64

    /// A key of these two words (tests pick theirs; the daemon calls `random()`).
    init(_ k0: UInt64, _ k1: UInt64) {
        self.k0 = k0
        self.k1 = k1
    }

    /// A fresh key from the kernel's generator.
    static func random() throws(PlatformError) -> JobIDKey {
        let bytes = try RandomBytes.read(16)
        var k0: UInt64 = 0, k1: UInt64 = 0
        for i in 0..<8 {
            k0 |= UInt64(bytes[i]) << (8 * i)
            k1 |= UInt64(bytes[8 + i]) << (8 * i)
        }
        return JobIDKey(k0, k1)
    }

    /// SipHash-2-4 of the eight bytes of `word` in little-endian order
    /// (one compression block, then the length block, then finalisation).
    func hash(_ word: UInt64) -> UInt64 {
        var s = SipState(k0: k0, k1: k1)
        s.absorb(word)
        s.absorb(8 << 56)  // the last block: no bytes left, the length 8 in its top byte
        return s.finish()
    }
}

/// SipHash's four-word state: two compression rounds per block, four
/// finalisation rounds.
private struct SipState {
    var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64

    init(k0: UInt64, k1: UInt64) {
        // The initial constants spell "somepseudorandomlygeneratedbytes".
        v0 = k0 ^ 0x736f_6d65_7073_6575
        v1 = k1 ^ 0x646f_7261_6e64_6f6d
        v2 = k0 ^ 0x6c79_6765_6e65_7261
        v3 = k1 ^ 0x7465_6462_7974_6573
    }

    mutating func absorb(_ m: UInt64) {
        v3 ^= m
        round()
        round()
        v0 ^= m
    }

    mutating func finish() -> UInt64 {
        v2 ^= 0xff
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }

    private mutating func round() {
        v0 &+= v1; v1 = rotate(v1, 13); v1 ^= v0; v0 = rotate(v0, 32)
        v2 &+= v3; v3 = rotate(v3, 16); v3 ^= v2
        v0 &+= v3; v3 = rotate(v3, 21); v3 ^= v0
        v2 &+= v1; v1 = rotate(v1, 17); v1 ^= v2; v2 = rotate(v2, 32)
    }

    /// A left rotation. The masking shifts (`&<<`, `&>>`) and the inlining
    /// let it compile to one instruction; the checked shifts did not, and
    /// the rotations were 3% of a job's instructions (every id is 96 of them).
    @inline(__always)
    private func rotate(_ x: UInt64, _ n: UInt64) -> UInt64 { (x &<< n) | (x &>> (64 &- n)) }
}
