/// A listener asks the DJ for the time (the first half of an NTP-style exchange).
/// `clientSendNs` is t1, the listener's clock when it sent the ping.
public struct TimePing: WireMessage {
    public static let kind = MessageKind.timePing
    public var clientSendNs: Int64
    /// The pong may wait for the DJ's next ``TimePongs`` to the group (docs/PROTOCOL.md, "Time
    /// pongs to the group"): a settled listener that hears the group asks so. An optional flags
    /// byte after t1, sent only when set: bit 0 is this, any other bit is malformed. A ping without
    /// it is what DJs before it read (they drop one with it, and the listener's next ping asks for
    /// a pong of its own).
    public var batched: Bool

    public init(clientSendNs: Int64, batched: Bool = false) {
        self.clientSendNs = clientSendNs
        self.batched = batched
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(clientSendNs)
        if batched { writer.write(UInt8(1)) }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        clientSendNs = try reader.read(Int64.self)
        guard reader.remaining > 0 else {
            batched = false
            return
        }
        let flags = try reader.readUInt8()
        guard flags <= 1 else { throw .malformed("time ping flags \(flags)") }
        batched = flags == 1
    }
}
