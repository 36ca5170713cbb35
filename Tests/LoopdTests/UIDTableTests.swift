import Testing
@testable import LoopdCore

/// `UIDTable`, under the per-uid quotas' ledger and the `jobs` owner
/// filter: the uid it remembers must never lend its slot to another.
@Suite struct UIDTableTests {
    private func count(_ t: inout UIDTable<Int>, _ uid: UInt32, _ delta: Int) {
        t.change(uid, make: { 0 }, dropWhen: { $0 == 0 }) { $0 += delta }
    }

    @Test func eachUIDKeepsItsOwnValueAcrossAlternatingChanges() {
        var t = UIDTable<Int>()
        count(&t, 1000, 1)
        count(&t, 1000, 1)
        count(&t, 2000, 5)
        count(&t, 1000, 1)
        count(&t, 2000, 1)
        #expect(t[1000] == 3)
        #expect(t[2000] == 6)
        #expect(t[3000] == nil)
        #expect(t.count == 2)
    }

    @Test func aValueLeftEmptyIsDroppedAndItsSlotServesAnotherUIDAlone() {
        var t = UIDTable<Int>()
        count(&t, 1000, 2)
        count(&t, 2000, 7)
        count(&t, 1000, -2)
        #expect(t[1000] == nil)
        #expect(t.count == 1)
        // 3000 takes 1000's slot; 1000 comes back in a slot of its own.
        count(&t, 3000, 4)
        count(&t, 1000, 1)
        #expect(t[3000] == 4)
        #expect(t[1000] == 1)
        #expect(t[2000] == 7)
        count(&t, 3000, -4)
        #expect(t[3000] == nil)
        #expect(t[1000] == 1)
        #expect(t.count == 2)
    }

    @Test func aChangeThatLeavesANewUIDEmptyAddsNothing() {
        var t = UIDTable<Int>()
        count(&t, 1000, 0)
        #expect(t[1000] == nil)
        #expect(t.count == 0)
    }
}
