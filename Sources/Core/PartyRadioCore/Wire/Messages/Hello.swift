/// A listener joins: the DJ counts it and answers at once with a unicast ``StateSnapshot``.
public struct Hello: WireMessage {
    public static let kind = MessageKind.hello
    /// A name for the DJ's listener list (the listener's host name by default).
    public var listenerName: String

    public init(listenerName: String) { self.listenerName = listenerName }

    public func encode(into writer: inout ByteWriter) { writer.writeString(listenerName, maxBytes: 64) }

    public init(from reader: inout ByteReader) throws(WireError) { listenerName = try reader.readString(maxBytes: 64) }
}
