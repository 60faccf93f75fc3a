/// A listener asks the DJ again for live frames it has not received (docs/LIVE.md, "Resend
/// requests"): the frames numbered `firstSequence + i` for each bit `i` set in `mask`. The DJ
/// answers with the frames themselves, by unicast to the asker, while it still has them.
public struct LiveResend: WireMessage, Hashable {
    public static let kind = MessageKind.liveResend
    /// How many frame numbers one request can name (the mask's bits).
    public static let span = 32

    public var firstSequence: UInt64
    /// Bit `i` (least significant first) asks for frame `firstSequence + i`; never zero.
    public var mask: UInt32

    public init(firstSequence: UInt64, mask: UInt32) {
        self.firstSequence = firstSequence
        self.mask = mask
    }

    /// The request for these frame numbers, in as many requests as they need (ascending, each
    /// spanning at most ``span`` numbers).
    public static func asking(for sequences: some Sequence<UInt64>) -> [LiveResend] {
        var requests: [LiveResend] = []
        for sequence in Set(sequences).sorted() {
            if var last = requests.last, sequence - last.firstSequence < UInt64(span) {
                last.mask |= 1 << UInt32(sequence - last.firstSequence)
                requests[requests.count - 1] = last
            } else {
                requests.append(LiveResend(firstSequence: sequence, mask: 1))
            }
        }
        return requests
    }

    /// The frame numbers asked for, ascending.
    public var sequences: [UInt64] {
        (0..<UInt64(Self.span)).filter { mask & (1 << UInt32($0)) != 0 }.map { firstSequence &+ $0 }
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(firstSequence)
        writer.write(mask)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        firstSequence = try reader.read(UInt64.self)
        mask = try reader.read(UInt32.self)
        guard mask != 0 else { throw .malformed("live resend asking for no frame") }
        guard firstSequence <= UInt64.max - UInt64(Self.span - 1) else {
            throw .malformed("live resend past the last frame number")
        }
    }
}
