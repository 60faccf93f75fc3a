/// A listener is still tuned in. Sent every second; three seconds without one and the DJ drops it.
public struct Heartbeat: WireMessage {
    public static let kind = MessageKind.heartbeat
    /// As in ``Hello``: the listener wants the group's messages by unicast.
    public var wantsUnicast: Bool
    /// As in ``Hello``: the return cookie of the listener's address.
    public var cookie: UInt64?
    /// Live frames this listener found missing on arrival since its last heartbeat (whatever
    /// repaired them after); nil or 0: none. The DJ sends its blocks' repairs while some listener
    /// loses frames (docs/LIVE.md, "Repairs while frames are lost").
    public var liveLost: UInt16?

    public init(wantsUnicast: Bool = false, cookie: UInt64? = nil, liveLost: UInt16? = nil) {
        self.wantsUnicast = wantsUnicast
        self.cookie = wantsUnicast ? cookie : nil
        self.liveLost = liveLost == 0 ? nil : liveLost
    }

    public func encode(into writer: inout ByteWriter) {
        ListenerFlags.write(wantsUnicast: wantsUnicast, cookie: cookie, liveLost: liveLost, into: &writer)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        (wantsUnicast, cookie, liveLost, _) = try ListenerFlags.read(from: &reader, kind: .heartbeat)
    }
}
