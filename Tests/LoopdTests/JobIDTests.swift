import Testing
@testable import LoopdCore

/// Opaque job ids (docs/PROTOCOL.md, "Jobs"): one user's id tells nothing
/// of another's, and this run still finds its jobs by the sequence the id
/// enciphers (`JobIDCodec`).
@Suite struct JobIDTests {
    private let codec = JobIDCodec(key: JobIDKey(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908))

    /// The permutation is Speck64/128: the designers' test vector (key
    /// 1b1a1918 13121110 0b0a0908 03020100, plaintext 3b726574 7475432d)
    /// enciphers to their ciphertext and deciphers back.
    @Test func thePermutationIsSpeck64With128BitKey() {
        let speck = Speck64(key: JobIDKey(0x0b0a_0908_0302_0100, 0x1b1a_1918_1312_1110))
        #expect(speck.encipher(0x3b72_6574_7475_432d) == 0x8c6f_a548_454e_028b)
        #expect(speck.decipher(0x8c6f_a548_454e_028b) == 0x3b72_6574_7475_432d)
    }

    /// Every id and cursor deciphers to the sequence it was made from; an
    /// id is never taken for a cursor nor a cursor for an id.
    @Test func idsAndCursorsDecipherToTheirSequence() {
        for sequence in Array(1...2_000) + [JobIDCodec.maxSequence - 1, JobIDCodec.maxSequence] {
            let id = codec.id(of: sequence), cursor = codec.cursor(after: sequence)
            #expect(id.utf8.count == 13 && cursor.utf8.count == 13)
            #expect(codec.sequence(ofID: id) == sequence && codec.sequence(ofCursor: cursor) == sequence)
            #expect(codec.sequence(ofCursor: id) == nil && codec.sequence(ofID: cursor) == nil)
        }
    }

    /// Ids of consecutive jobs are unrelated: about half of the 64 bits
    /// differ between neighbours (a counter changes a few low ones), and
    /// another run's key makes other ids of the same sequences, which this
    /// run's key does not decipher.
    @Test func consecutiveIDsShareNothingAndOtherKeysIDsAreNotThisRuns() throws {
        var flipped = 0
        for sequence in UInt64(1)...1_000 {
            let a = try #require(UInt64(codec.id(of: sequence), radix: 36))
            let b = try #require(UInt64(codec.id(of: sequence + 1), radix: 36))
            flipped += (a ^ b).nonzeroBitCount
        }
        #expect((28_000...36_000).contains(flipped), "\(flipped) bits flipped over 1,000 neighbours")
        let other = JobIDCodec(key: JobIDKey(1, 2))
        for sequence in UInt64(1)...1_000 {
            #expect(other.id(of: sequence) != codec.id(of: sequence))
            #expect(codec.sequence(ofID: other.id(of: sequence)) == nil)
        }
    }

    /// What is not an id of this run deciphers to nothing: ids of the
    /// older `<start>-<n>` form, wrong lengths and alphabets, a 13-digit
    /// number beyond 64 bits.
    @Test func otherStringsAreNotIDsOfThisRun() {
        let id = codec.id(of: 7)
        for text in ["mwrj646y-12", "", String(id.dropLast()), id + "0", id.uppercased(), "zzzzzzzzzzzzz",
                     "0000000000-00", String(id.dropLast()) + "/"] {
            #expect(codec.sequence(ofID: text) == nil, "\(text)")
        }
    }

    /// The table finds a replayed job whose id this run's key deciphers to
    /// another job's sequence: the job there does not carry the id, so the
    /// replayed ids are asked.
    @Test func aReplayedIDThatDeciphersToAnotherSequenceIsStillFound() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        var ids = JobIDGenerator(key: JobIDKey(3, 5))
        var table = JobTable(retainedCapacity: 10, ids: ids.codec)
        // Sequence 1: replayed, with the id this run would make for sequence 2.
        let replayed = fixture.job(ids.codec.id(of: 2))
        _ = ids.next(keeping: replayed.id)
        table.insert(replayed)
        // Sequence 2: a new job; its own id is taken, so it gets sequence 3's.
        let (sequence, id) = ids.next { table.hasOtherID($0) }
        #expect(sequence == 3)
        let fresh = fixture.job(id, sequence: sequence)
        table.insert(fresh, generatedID: true)
        table.sealOtherIDs()
        #expect(table[replayed.id] === replayed && table[fresh.id] === fresh)
    }
}
