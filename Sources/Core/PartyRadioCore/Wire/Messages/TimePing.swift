/// A listener asks the DJ for the time (the first half of an NTP-style exchange).
/// `clientSendNs` is t1, the listener's clock when it sent the ping.
public struct TimePing: WireMessage {
    public static let kind = MessageKind.timePing
    public var clientSendNs: Int64

    public init(clientSendNs: Int64) { self.clientSendNs = clientSendNs }

    public func encode(into writer: inout ByteWriter) { writer.write(clientSendNs) }

    public init(from reader: inout ByteReader) throws(WireError) { clientSendNs = try reader.read(Int64.self) }
}
