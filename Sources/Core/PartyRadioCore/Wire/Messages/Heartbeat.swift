/// A listener is still tuned in. Sent every second; three seconds without one and the DJ drops it.
public struct Heartbeat: WireMessage {
    public static let kind = MessageKind.heartbeat
    /// As in ``Hello``: the listener wants the group's messages by unicast.
    public var wantsUnicast: Bool
    /// As in ``Hello``: the return cookie of the listener's address.
    public var cookie: UInt64?

    public init(wantsUnicast: Bool = false, cookie: UInt64? = nil) {
        self.wantsUnicast = wantsUnicast
        self.cookie = wantsUnicast ? cookie : nil
    }

    public func encode(into writer: inout ByteWriter) {
        ListenerFlags.write(wantsUnicast: wantsUnicast, cookie: cookie, into: &writer)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        (wantsUnicast, cookie) = try ListenerFlags.read(from: &reader)
    }
}
