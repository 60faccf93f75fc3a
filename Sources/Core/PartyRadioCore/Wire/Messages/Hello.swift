/// A listener joins: the DJ counts it and answers at once with a unicast ``StateSnapshot``.
public struct Hello: WireMessage {
    public static let kind = MessageKind.hello
    /// A name for the DJ's listener list (the listener's host name by default).
    public var listenerName: String
    /// The listener is not on the station's multicast group (it found the DJ in a unicast DNS-SD
    /// domain, beyond a router): the DJ sends it what it sends the group, by unicast.
    public var wantsUnicast: Bool

    public init(listenerName: String, wantsUnicast: Bool = false) {
        self.listenerName = listenerName
        self.wantsUnicast = wantsUnicast
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(listenerName, maxBytes: 64)
        // Only when set: a hello without it is byte for byte what DJs before it read.
        if wantsUnicast { writer.write(ListenerFlags.unicast) }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        listenerName = try reader.readString(maxBytes: 64)
        wantsUnicast = try ListenerFlags.read(from: &reader)
    }
}

/// The optional last byte of a hello or heartbeat: bit 0 asks for unicast copies of the group's
/// messages; the other bits are reserved (sent 0, ignored).
enum ListenerFlags {
    static let unicast: UInt8 = 1

    static func read(from reader: inout ByteReader) throws(WireError) -> Bool {
        guard reader.remaining > 0 else { return false }
        return try reader.readUInt8() & unicast != 0
    }
}
