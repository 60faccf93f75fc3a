/// A listener is still tuned in. Sent every second; three seconds without one and the DJ drops it.
public struct Heartbeat: WireMessage {
    public static let kind = MessageKind.heartbeat
    /// As in ``Hello``: the listener wants the group's messages by unicast.
    public var wantsUnicast: Bool

    public init(wantsUnicast: Bool = false) { self.wantsUnicast = wantsUnicast }

    public func encode(into writer: inout ByteWriter) {
        if wantsUnicast { writer.write(ListenerFlags.unicast) }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        wantsUnicast = try ListenerFlags.read(from: &reader)
    }
}
