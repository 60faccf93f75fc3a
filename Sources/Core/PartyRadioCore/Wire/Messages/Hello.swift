/// A listener joins: the DJ counts it and answers at once with a unicast ``StateSnapshot``.
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

    public init(listenerName: String, wantsUnicast: Bool = false, cookie: UInt64? = nil) {
        self.listenerName = listenerName
        self.wantsUnicast = wantsUnicast
        self.cookie = wantsUnicast ? cookie : nil
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(listenerName, maxBytes: 64)
        ListenerFlags.write(wantsUnicast: wantsUnicast, cookie: cookie, into: &writer)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        listenerName = try reader.readString(maxBytes: 64)
        (wantsUnicast, cookie) = try ListenerFlags.read(from: &reader)
    }
}

/// The optional end of a hello or heartbeat: a flags byte, whose bit 0 asks for unicast copies of
/// the group's messages and whose bit 1 (a heartbeat's only) says a `u16` count of live frames lost
/// follows (the other bits, and bit 1 on a hello, are reserved: sent 0, ignored); then the count,
/// with bit 1 on a heartbeat; then, with
/// bit 0, the optional 8-byte return cookie. Written only when a bit is set: a hello or heartbeat
/// without either is byte for byte what DJs before them read.
enum ListenerFlags {
    static let unicast: UInt8 = 1
    static let liveLost: UInt8 = 2

    static func write(wantsUnicast: Bool, cookie: UInt64?, liveLost lost: UInt16? = nil, into writer: inout ByteWriter)
    {
        guard wantsUnicast || lost != nil else { return }
        writer.write((wantsUnicast ? unicast : 0) | (lost != nil ? liveLost : 0))
        if let lost { writer.write(lost) }
        if wantsUnicast, let cookie { writer.write(cookie) }
    }

    static func read(from reader: inout ByteReader) throws(WireError) -> (Bool, UInt64?) {
        let (wants, cookie, _) = try read(from: &reader, takesLiveLost: false)
        return (wants, cookie)
    }

    /// - Parameter takesLiveLost: a heartbeat (on a hello, bit 1 is reserved).
    static func read(from reader: inout ByteReader, takesLiveLost: Bool) throws(WireError) -> (Bool, UInt64?, UInt16?) {
        guard reader.remaining > 0 else { return (false, nil, nil) }
        let flags = try reader.readUInt8()
        let wants = flags & unicast != 0
        var lost: UInt16?
        if takesLiveLost, flags & liveLost != 0 {
            let count = try reader.read(UInt16.self)
            lost = count == 0 ? nil : count
        }
        guard reader.remaining > 0 else { return (wants, nil, lost) }
        let cookie = try reader.read(UInt64.self)
        return wants ? (true, cookie, lost) : (false, nil, lost)
    }
}
