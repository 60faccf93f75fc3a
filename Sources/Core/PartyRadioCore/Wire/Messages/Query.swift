/// An observer (`stations`, `vote`) asks for a snapshot without joining: it is not counted as a listener.
public struct Query: WireMessage {
    public static let kind = MessageKind.query
    public init() {}
    public func encode(into writer: inout ByteWriter) {}
    public init(from reader: inout ByteReader) throws(WireError) {}
}
