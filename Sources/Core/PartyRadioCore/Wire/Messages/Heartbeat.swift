/// A listener is still tuned in. Sent every second; three seconds without one and the DJ drops it.
public struct Heartbeat: WireMessage {
    public static let kind = MessageKind.heartbeat
    public init() {}
    public func encode(into writer: inout ByteWriter) {}
    public init(from reader: inout ByteReader) throws(WireError) {}
}
