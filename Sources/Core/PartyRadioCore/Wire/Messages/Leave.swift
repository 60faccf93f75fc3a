/// A listener tunes out cleanly; the DJ's listener count drops at once.
public struct Leave: WireMessage {
    public static let kind = MessageKind.leave
    public init() {}
    public func encode(into writer: inout ByteWriter) {}
    public init(from reader: inout ByteReader) throws(WireError) {}
}
