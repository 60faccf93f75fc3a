/// The DJ's answer, when its verification budget is short, to a datagram from a sender it does
/// not know that showed no valid admission cookie: the cookie of the sender's key at the address
/// and port the datagram came from (``AddressCookies``). The sender shows it in what it sends next
/// (the header's cookie), and such datagrams get a share of the budget that a flood from
/// addresses that cannot read their answers never reaches (docs/PROTOCOL.md, "Admission cookies").
///
/// The one message that is neither signed nor MACed, so that sending it costs the DJ no more than
/// dropping the datagram would: it is smaller than anything it answers, carries no state, and a
/// receiver takes nothing from it but the cookie to echo (the ``Outbox``, only when `echo` is the
/// sequence number of a datagram it sent to that station lately).
public struct CookieChallenge: WireMessage {
    public static let kind = MessageKind.cookieChallenge
    /// The sequence number of the datagram answered.
    public var echo: UInt64
    public var cookie: UInt64

    public init(echo: UInt64, cookie: UInt64) {
        self.echo = echo
        self.cookie = cookie
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(echo)
        writer.write(cookie)
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        echo = try reader.read(UInt64.self)
        cookie = try reader.read(UInt64.self)
    }
}
