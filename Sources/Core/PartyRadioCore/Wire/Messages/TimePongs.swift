/// The DJ's answers to the batched ``TimePing``s of the last moments, in one datagram to the group
/// (docs/PROTOCOL.md, "Time pongs to the group"): one t3 for all, and for each ping the pinger,
/// its t1 and the t2 the DJ received it at. Each listener takes the entries that name it. A
/// pong's datagram costs 190 bytes on an Ethernet; an entry here 24.
public struct TimePongs: WireMessage {
    public static let kind = MessageKind.timePongs
    /// The most entries one datagram holds: 40 × 24 bytes and the rest stay within
    /// ``Datagram/maxSize``, sealed or not.
    public static let entryRange: ClosedRange<Int> = 1...40

    /// One answered ping.
    public struct Entry: Hashable, Sendable {
        /// The first 8 bytes of the pinger's key (``PublicKey/prefix``): making a key whose
        /// prefix is another's takes about 2⁶⁴ tries.
        public var guest: UInt64
        public var clientSendNs: Int64
        public var serverReceiveNs: Int64

        public init(guest: UInt64, clientSendNs: Int64, serverReceiveNs: Int64) {
            self.guest = guest
            self.clientSendNs = clientSendNs
            self.serverReceiveNs = serverReceiveNs
        }
    }

    /// t3 for every entry: the runtime stamps it as it sends (``Outbox``).
    public var serverSendNs: Int64
    public var entries: [Entry]

    public init(serverSendNs: Int64, entries: [Entry]) {
        self.serverSendNs = serverSendNs
        self.entries = entries
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(serverSendNs)
        writer.write(UInt8(truncatingIfNeeded: entries.count))
        for entry in entries {
            writer.write(entry.guest)
            writer.write(entry.clientSendNs)
            writer.write(entry.serverReceiveNs)
        }
    }

    public init(from reader: inout ByteReader) throws(WireError) {
        serverSendNs = try reader.read(Int64.self)
        let count = Int(try reader.readUInt8())
        guard Self.entryRange.contains(count) else { throw .malformed("time pongs with \(count) entries") }
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(
                Entry(
                    guest: try reader.read(UInt64.self), clientSendNs: try reader.read(Int64.self),
                    serverReceiveNs: try reader.read(Int64.self)))
        }
    }
}
