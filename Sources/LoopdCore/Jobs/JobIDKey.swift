import LoopPlatform

/// The secret of one run of the daemon that its job ids are made with
/// (`JobIDCodec`): 128 bits from the kernel's generator, drawn at every
/// start, never written anywhere. Immutable.
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
}

/// The block cipher Speck64/128 (Beaulieu, Shors, Smith, Treatman-Clark,
/// Weeks and Wingers, 2013) under one `JobIDKey`: a keyed permutation of
/// 64-bit words, 27 rounds of add, rotate and xor on the word's 32-bit
/// halves. Published attacks break versions with fewer rounds, none the
/// full 27: without the key, a run's ids cannot be told from a random
/// permutation's. The round keys are expanded once. Immutable.
///
/// Why written out here: no library the daemon depends on has a 64-bit
/// block cipher (swift-crypto's are 128-bit, and an id must fit 13
/// digits), and the whole cipher is the two short loops below, checked
/// against the designers' test vector.
struct Speck64: Sendable {
    /// One key a round, 27 rounds.
    private let roundKeys: InlineArray<27, UInt32>

    /// The key's four 32-bit words, lowest first: the first round key and
    /// the three words the schedule starts from.
    init(key: JobIDKey) {
        var k = UInt32(truncatingIfNeeded: key.k0)
        var l = [UInt32(truncatingIfNeeded: key.k0 >> 32), UInt32(truncatingIfNeeded: key.k1),
                 UInt32(truncatingIfNeeded: key.k1 >> 32)]
        var keys = InlineArray<27, UInt32>(repeating: k)
        for i in 0..<(keys.count - 1) {
            let next = (k &+ Self.rotateRight(l[i], 8)) ^ UInt32(i)
            l.append(next)
            k = Self.rotateLeft(k, 3) ^ next
            keys[i + 1] = k
        }
        roundKeys = keys
    }

    /// `word` enciphered: its high half is Speck's x, its low half y.
    func encipher(_ word: UInt64) -> UInt64 {
        var x = UInt32(truncatingIfNeeded: word >> 32), y = UInt32(truncatingIfNeeded: word)
        // Through a span: a subscript of the stored array copied all of it per round.
        let keys = roundKeys.span
        for i in keys.indices {
            x = (Self.rotateRight(x, 8) &+ y) ^ keys[i]
            y = Self.rotateLeft(y, 3) ^ x
        }
        return UInt64(x) << 32 | UInt64(y)
    }

    /// The rounds undone, last first: `decipher(encipher(w)) == w`.
    func decipher(_ word: UInt64) -> UInt64 {
        var x = UInt32(truncatingIfNeeded: word >> 32), y = UInt32(truncatingIfNeeded: word)
        let keys = roundKeys.span
        for i in keys.indices.reversed() {
            y = Self.rotateRight(y ^ x, 3)
            x = Self.rotateLeft((x ^ keys[i]) &- y, 8)
        }
        return UInt64(x) << 32 | UInt64(y)
    }

    // Masking shifts, inlined: each rotation compiles to one instruction.
    @inline(__always)
    private static func rotateLeft(_ v: UInt32, _ n: UInt32) -> UInt32 { (v &<< n) | (v &>> (32 &- n)) }
    @inline(__always)
    private static func rotateRight(_ v: UInt32, _ n: UInt32) -> UInt32 { (v &>> n) | (v &<< (32 &- n)) }
}
