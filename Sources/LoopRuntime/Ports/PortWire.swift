
/// The datagram every named port speaks. One datagram is one message: a
/// fixed 24-byte header, all integers little-endian, then the payload.
///
/// ```
/// offset size field
///      0    4 magic     "LDPM" (0x4C 0x44 0x50 0x4D)
///      4    1 version   1
///      5    1 kind      1 one-way, 2 request, 3 reply
///      6    1 status    replies: 0 ok, 1 port invalidated, 2 reply too large,
///                       3 sender refused (another user); 0 in every other kind
///      7    1 reserved  0
///      8    8 sequence  UInt64 chosen by the requester, echoed by the reply
///     16    4 id        Int32 message id (CFMessagePort's msgid)
///     20    4 length    UInt32 payload length; header + length = datagram size
///     24    … payload   at most `LoopMessagePort.maximumPayloadSize` bytes
/// ```
///
/// A reply goes to the address the request came from, so a requester must
/// send from a bound socket (Linux autobind will do). Python, for instance:
/// `struct.pack('<4sBBBBQiI', b'LDPM', 1, kind, 0, 0, seq, id, len(p)) + p`.
/// A datagram that breaks any rule above is dropped unread.
enum PortWire {
    static let magic: (UInt8, UInt8, UInt8, UInt8) = (0x4C, 0x44, 0x50, 0x4D)
    static let version: UInt8 = 1
    static let headerSize = 24

    /// 64 KiB. A Unix datagram must fit the sender's socket buffer
    /// (`net.core.wmem_default`, 208 KiB on stock kernels, minus overhead),
    /// so a whole message always goes in one datagram with room to spare;
    /// and the receiving port keeps one buffer of this size, not more.
    static let maximumPayloadSize = 65_536

    /// The largest datagram a port accepts.
    static let maximumDatagramSize = headerSize + maximumPayloadSize

    enum Kind: UInt8 {
        case oneWay = 1
        case request = 2
        case reply = 3
    }

    enum Status: UInt8 {
        case ok = 0
        /// The port was invalidated with the request still queued.
        case portInvalidated = 1
        /// The handler's reply exceeded `maximumPayloadSize`.
        case replyTooLarge = 2
        /// The port admits only its own user's messages, and the sender is another.
        case senderRefused = 3
    }

    struct Header: Equatable {
        var kind: Kind
        var status: Status = .ok
        var sequence: UInt64
        var id: Int32
        var payloadLength: Int
    }

    /// One datagram: header then payload. The caller has checked the size.
    static func encode(_ header: Header, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= maximumPayloadSize && header.payloadLength == payload.count,
                     "a message payload is checked against maximumPayloadSize before encoding")
        var out: [UInt8] = []
        out.reserveCapacity(headerSize + payload.count)
        out += [magic.0, magic.1, magic.2, magic.3, version, header.kind.rawValue, header.status.rawValue, 0]
        appendLittleEndian(header.sequence, to: &out)
        appendLittleEndian(UInt32(bitPattern: header.id), to: &out)
        appendLittleEndian(UInt32(payload.count), to: &out)
        out += payload
        return out
    }

    /// The header of a received datagram of `length` bytes held in `bytes`,
    /// or nil if anything about it is wrong: a truncated or oversized
    /// datagram, a foreign magic or version, an unknown kind or status, a
    /// status on a non-reply, a nonzero reserved byte, or a length field
    /// that disagrees with the datagram's size. Never traps: the bytes may
    /// come from any process on the machine.
    static func decode(_ bytes: UnsafeRawBufferPointer, length: Int) -> Header? {
        guard length >= headerSize, length <= maximumDatagramSize, length <= bytes.count else { return nil }
        guard bytes[0] == magic.0, bytes[1] == magic.1, bytes[2] == magic.2, bytes[3] == magic.3,
              bytes[4] == version, bytes[7] == 0,
              let kind = Kind(rawValue: bytes[5]), let status = Status(rawValue: bytes[6]),
              kind == .reply || status == .ok
        else { return nil }
        let sequence = readLittleEndian(bytes, at: 8, as: UInt64.self)
        let id = Int32(bitPattern: readLittleEndian(bytes, at: 16, as: UInt32.self))
        let declared = Int(readLittleEndian(bytes, at: 20, as: UInt32.self))
        guard declared == length - headerSize else { return nil }
        return Header(kind: kind, status: status, sequence: sequence, id: id, payloadLength: declared)
    }

    private static func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func readLittleEndian<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, at offset: Int, as: T.Type) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
