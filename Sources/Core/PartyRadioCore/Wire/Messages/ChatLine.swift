/// A chat line the DJ delivered, to every listener (the group, twice against loss; listeners
/// show each `(sender, messageID)` once).
public struct ChatLine: WireMessage, Hashable, Codable {
    public static let kind = MessageKind.chatLine

    /// The sender's key fingerprint (16 hex digits): who said it, whatever name they gave.
    public var sender: String
    public var messageID: UInt64
    public var name: String
    public var text: String

    public init(sender: String, messageID: UInt64, name: String, text: String) {
        self.sender = sender
        self.messageID = messageID
        self.name = name
        self.text = text
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeString(sender, maxBytes: 16)
        writer.write(messageID)
        writer.writeString(name, maxBytes: ChatSend.Limit.name)
        writer.writeLongString(text, maxBytes: ChatSend.Limit.textBytes)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        sender = try reader.readString(maxBytes: 16)
        messageID = try reader.read(UInt64.self)
        name = try reader.readString(maxBytes: ChatSend.Limit.name)
        text = try reader.readLongString(maxBytes: ChatSend.Limit.textBytes)
    }
}
