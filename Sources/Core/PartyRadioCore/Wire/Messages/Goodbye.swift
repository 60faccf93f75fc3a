/// The station is going off air: listeners stop and observers drop it from their lists at once.
public struct Goodbye: WireMessage {
    public static let kind = MessageKind.goodbye
    public var reason: String

    public init(reason: String) { self.reason = reason }

    public func encode(into writer: inout ByteWriter) { writer.writeString(reason, maxBytes: 100) }

    public init(from reader: inout ByteReader) throws(WireError) { reason = try reader.readString(maxBytes: 100) }
}
