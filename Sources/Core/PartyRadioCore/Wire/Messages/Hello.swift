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
/// the group's messages (the other bits are reserved: sent 0, ignored), then, with that bit, the
/// optional 8-byte return cookie. Written only when the bit is set: a hello without it is byte for
/// byte what DJs before it read.
enum ListenerFlags {
    static let unicast: UInt8 = 1

    static func write(wantsUnicast: Bool, cookie: UInt64?, into writer: inout ByteWriter) {
        guard wantsUnicast else { return }
        writer.write(unicast)
        if let cookie { writer.write(cookie) }
    }

    static func read(from reader: inout ByteReader) throws(WireError) -> (Bool, UInt64?) {
        guard reader.remaining > 0 else { return (false, nil) }
        let wants = try reader.readUInt8() & unicast != 0
        guard reader.remaining > 0 else { return (wants, nil) }
        let cookie = try reader.read(UInt64.self)
        return wants ? (true, cookie) : (false, nil)
    }
}
