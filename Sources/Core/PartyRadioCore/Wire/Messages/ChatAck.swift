/// The DJ's answer to a ``ChatSend``: delivered (now, or before: a retry), or refused and why.
public struct ChatAck: WireMessage {
    public static let kind = MessageKind.chatAck

    public enum Status: UInt8, Sendable {
        /// Delivered to the station now.
        case delivered = 0
        /// Delivered before (this was a retry); not shown again.
        case duplicate = 1
        /// Too many lines too fast; try again after `retryAfterMs`.
        case rateLimited = 2
        /// The DJ muted this guest.
        case muted = 3
        /// Empty, too long, or not plain text.
        case rejected = 4
        /// Older than a line already delivered from this sender.
        case stale = 5
    }

    public var messageID: UInt64
    public var status: Status
    public var retryAfterMs: UInt32

    public init(messageID: UInt64, status: Status, retryAfterMs: UInt32 = 0) {
        self.messageID = messageID
        self.status = status
        self.retryAfterMs = retryAfterMs
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(messageID)
        writer.write(status.rawValue)
        writer.write(retryAfterMs)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        messageID = try reader.read(UInt64.self)
        let raw = try reader.readUInt8()
        guard let status = Status(rawValue: raw) else { throw .malformed("chat status \(raw)") }
        self.status = status
        retryAfterMs = try reader.read(UInt32.self)
    }
}
