/// The DJ's answer to a ``TimePing``: t1 echoed, t2 when the DJ received the ping and t3 when it
/// sent this pong, both on the DJ clock. With t4 (the listener's receive time) the listener
/// has the four timestamps of docs/CLOCK-SYNC.md.
public struct TimePong: WireMessage {
    public static let kind = MessageKind.timePong
    public var clientSendNs: Int64
    public var serverReceiveNs: Int64
    public var serverSendNs: Int64
    /// The pinger's return cookie at the address the ping came from (``UnicastListeners``): a
    /// listener that wants unicast copies shows it in its hello or heartbeat. Optional last 8 bytes.
    public var cookie: UInt64?

    public init(clientSendNs: Int64, serverReceiveNs: Int64, serverSendNs: Int64, cookie: UInt64? = nil) {
        self.clientSendNs = clientSendNs
        self.serverReceiveNs = serverReceiveNs
        self.serverSendNs = serverSendNs
        self.cookie = cookie
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(clientSendNs)
        writer.write(serverReceiveNs)
        writer.write(serverSendNs)
        if let cookie { writer.write(cookie) }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        clientSendNs = try reader.read(Int64.self)
        serverReceiveNs = try reader.read(Int64.self)
        serverSendNs = try reader.read(Int64.self)
        cookie = reader.remaining > 0 ? try reader.read(UInt64.self) : nil
    }
}
