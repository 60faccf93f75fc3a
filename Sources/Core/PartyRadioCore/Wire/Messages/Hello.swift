/// A listener joins: the DJ counts it and answers at once with a unicast ``StateSnapshot`` (unless
/// the hello is a ``isRepeat`` from a listener it knows, which hears the group's snapshots anyway).
public struct Hello: WireMessage {
    public static let kind = MessageKind.hello
    /// A name for the DJ's listener list (the listener's host name by default).
    public var listenerName: String
    /// The listener is not on the station's multicast group (it found the DJ in a unicast DNS-SD
    /// domain, beyond a router): the DJ sends it what it sends the group, by unicast.
    public var wantsUnicast: Bool
    /// With ``wantsUnicast``: the return cookie of the address it sends from, from the DJ's last
    /// time pong (``TimePong/cookie``); the DJ starts the copies only at an address whose cookie it
    /// is shown (a forged source address gets none).
    public var cookie: UInt64?
    /// The listener's periodic hello (every fifth beat, for its name), sent once the DJ has
    /// answered: a DJ that has it in its listener list sends no snapshot back, since the group's
    /// come twice a second.
    public var isRepeat: Bool

    public init(listenerName: String, wantsUnicast: Bool = false, cookie: UInt64? = nil, isRepeat: Bool = false) {
        self.listenerName = listenerName
        self.wantsUnicast = wantsUnicast
        self.cookie = wantsUnicast ? cookie : nil
        self.isRepeat = isRepeat
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(listenerName, maxBytes: 64)
        ListenerFlags.write(wantsUnicast: wantsUnicast, cookie: cookie, isRepeat: isRepeat, into: &writer)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        listenerName = try reader.readString(maxBytes: 64)
        (wantsUnicast, cookie, _, isRepeat) = try ListenerFlags.read(from: &reader, kind: .hello)
    }
}

/// The optional end of a hello or heartbeat: a flags byte, whose bit 0 asks for unicast copies of
/// the group's messages, whose bit 1 (a heartbeat's only) says a `u16` count of live frames lost
/// follows, and whose bit 2 (a hello's only) says the hello is a repeat (``Hello/isRepeat``); the
/// other bits, and each of bits 1 and 2 on the other kind, are reserved: sent 0, ignored. Then the
/// count, with bit 1 on a heartbeat; then, with bit 0, the optional 8-byte return cookie. Written
/// only when a bit is set: a hello or heartbeat without any is byte for byte what DJs before them
/// read.
enum ListenerFlags {
    static let unicast: UInt8 = 1
    static let liveLost: UInt8 = 2
    static let isRepeat: UInt8 = 4

    static func write(
        wantsUnicast: Bool, cookie: UInt64?, liveLost lost: UInt16? = nil, isRepeat again: Bool = false,
        into writer: inout ByteWriter
    ) {
        guard wantsUnicast || lost != nil || again else { return }
        writer.write((wantsUnicast ? unicast : 0) | (lost != nil ? liveLost : 0) | (again ? isRepeat : 0))
        if let lost { writer.write(lost) }
        if wantsUnicast, let cookie { writer.write(cookie) }
    }

    /// - Parameter kind: whose flags: a heartbeat's bit 1, a hello's bit 2.
    static func read(
        from reader: inout ByteReader, kind: MessageKind
    ) throws(WireError) -> (Bool, UInt64?, UInt16?, Bool) {
        guard reader.remaining > 0 else { return (false, nil, nil, false) }
        let flags = try reader.readUInt8()
        let wants = flags & unicast != 0
        let again = kind == .hello && flags & isRepeat != 0
        var lost: UInt16?
        if kind == .heartbeat, flags & liveLost != 0 {
            let count = try reader.read(UInt16.self)
            lost = count == 0 ? nil : count
        }
        guard reader.remaining > 0 else { return (wants, nil, lost, again) }
        let cookie = try reader.read(UInt64.self)
        return wants ? (true, cookie, lost, again) : (false, nil, lost, again)
    }
}
