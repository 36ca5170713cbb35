/// A value per uid, for the tables a job touches as it is accepted and as
/// it ends (`UserLedger`, the owner sets of `JobIndex`). A client's jobs
/// come in runs of one uid, so the table remembers the last uid it was
/// asked for and where its value is: a run's lookups after the first hash
/// nothing. The values sit in slots that a uid keeps until its value is
/// dropped; the dictionary maps a uid to its slot.
struct UIDTable<Value> {
    private var slotOf: [UInt32: Int] = [:]
    /// The values; nil in a slot whose value was dropped. A slot that
    /// `slotOf` or `recent` names always holds one: `drop` takes it out of
    /// both as it empties the slot.
    private var slots: [Value?] = []
    /// Slots whose value was dropped, to be used again.
    private var freeSlots: [Int] = []
    /// The uid last looked up and its slot, while that uid has one.
    private var recent: (uid: UInt32, slot: Int)?

    /// How many uids have a value.
    var count: Int { slotOf.count }

    /// The value of `uid`, if it has one.
    subscript(uid: UInt32) -> Value? {
        if let recent, recent.uid == uid { return slots[recent.slot] }
        guard let slot = slotOf[uid] else { return nil }
        return slots[slot]
    }

    /// Changes the value of `uid` in place, made by `make` if it has none;
    /// a value that `isEmpty` afterwards is dropped.
    mutating func change(_ uid: UInt32, make: () -> Value, dropWhen isEmpty: (Value) -> Bool,
                         _ body: (inout Value) -> Void) {
        let slot: Int
        if let recent, recent.uid == uid {
            slot = recent.slot
        } else if let known = slotOf[uid] {
            slot = known
        } else {
            var value = make()
            body(&value)
            if !isEmpty(value) { insert(uid, value) }
            return
        }
        recent = (uid, slot)
        // The slot holds a value (see `slots`); changed where it lies, so a
        // value with storage of its own is not copied to be changed.
        body(&slots[slot]!)
        if isEmpty(slots[slot]!) { drop(uid, slot) }
    }

    private mutating func insert(_ uid: UInt32, _ value: Value) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = value
        } else {
            slot = slots.count
            slots.append(value)
        }
        slotOf[uid] = slot
        recent = (uid, slot)
    }

    private mutating func drop(_ uid: UInt32, _ slot: Int) {
        slots[slot] = nil
        slotOf[uid] = nil
        freeSlots.append(slot)
        recent = nil
    }
}
