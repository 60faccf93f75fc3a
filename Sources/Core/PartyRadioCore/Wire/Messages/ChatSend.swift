/// A guest's chat line to the station. Retried until a ``ChatAck`` for its `messageID` comes;
/// the DJ delivers each ID once, in order per sender.
public struct ChatSend: WireMessage {
    public static let kind = MessageKind.chatSend

    /// Increasing per sender key (the `chat` command takes its clock in microseconds), so a
    /// retry is recognised and an older line never overtakes a newer one.
    public var messageID: UInt64
    /// The sender's guest name, as for hello.
    public var name: String
    public var text: String

    public enum Limit {
        /// At most this many characters…
        public static let characters = 280
        /// …and this many bytes of UTF-8 (280 four-byte characters would not fit a datagram).
        public static let textBytes = 840
        public static let name = 64
    }

    public init(messageID: UInt64, name: String, text: String) {
        self.messageID = messageID
        self.name = name
        self.text = text
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(messageID)
        writer.writeString(name, maxBytes: Limit.name)
        writer.writeLongString(text, maxBytes: Limit.textBytes)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        messageID = try reader.read(UInt64.self)
        name = try reader.readString(maxBytes: Limit.name)
        text = try reader.readLongString(maxBytes: Limit.textBytes)
    }
}
